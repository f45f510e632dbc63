/* Unit tests of trackers/util.c parsers: decimal counters (the hand parser's edges and the
 * writer), sizes (suffixes, fractions, "max", errors); the untimed stat of a file; the
 * path-less fstat (a directory's link count, a pipe, a closed fd) and the eventfd test. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testsupport.h"
#include "trackers/util.h"

/* parse(in) against the wanted result and value (the value only when it succeeds) */
static void check_parse(int (*parse)(const char *, uint64_t *), const char *name, const char *in, int want_r,
                        uint64_t want)
{
        uint64_t v = 0;
        int r = parse(in, &v);
        if (r != want_r || (r == 0 && v != want))
                fprintf(stderr, "%s(\"%s\"): %d %llu, want %d %llu\n", name, in, r, (unsigned long long) v, want_r,
                        (unsigned long long) want);
        CU_ASSERT(r == want_r && (r != 0 || v == want));
}

static void check_u64(const char *in, int want_r, uint64_t want)
{
        check_parse(tr_parse_u64, "tr_parse_u64", in, want_r, want);
}

static void check_size(const char *in, int want_r, uint64_t want)
{
        check_parse(tr_parse_size, "tr_parse_size", in, want_r, want);
}

static void test_u64(void)
{
        check_u64("0", 0, 0);
        check_u64("0007\n", 0, 7);
        check_u64("4294967296", 0, 4294967296ull);
        check_u64("18446744073709551615", 0, UINT64_MAX);
        check_u64("18446744073709551616", -ERANGE, 0);
        check_u64("99999999999999999999", -ERANGE, 0);
        check_u64("9999999999999999999", 0, 9999999999999999999ull); /* 19 digits: no check needed */
        check_u64("000000000000000000018446744073709551615", 0, UINT64_MAX); /* checked past 19 */
        check_u64("00000000000000000001844674407370955161600", -ERANGE, 0);
        check_u64("", -EINVAL, 0);
        check_u64("-1", -EINVAL, 0);
        check_u64("+1", -EINVAL, 0);
        check_u64(" 1", -EINVAL, 0);
        check_u64("1 ", -EINVAL, 0);
        check_u64("12a", -EINVAL, 0);
        check_u64("1\n\n", -EINVAL, 0);
}

static void check_put(uint64_t v, const char *want)
{
        char buf[24];
        memset(buf, 'x', sizeof buf);
        char *end = tr_put_u64(buf, v);
        CU_ASSERT_EQUAL((size_t) (end - buf), strlen(want));
        CU_ASSERT(memcmp(buf, want, strlen(want)) == 0 && *end == 'x'); /* no NUL written */
}

static void test_put_u64(void)
{
        check_put(0, "0");
        check_put(7, "7");
        check_put(4294967296ull, "4294967296");
        check_put(UINT64_MAX, "18446744073709551615");
}

static void test_sizes(void)
{
        check_size("0", 0, 0);
        check_size("4096", 0, 4096);
        check_size("64M", 0, 64ull << 20);
        check_size("64MB", 0, 64ull << 20);
        check_size("2k", 0, 2048);
        check_size("1G\n", 0, 1ull << 30);
        check_size("1.5G", 0, 3ull << 29);
        check_size("0.5K", 0, 512);
        check_size("2.25M", 0, (9ull << 20) / 4);
        check_size("1.1K", 0, 1126); /* 1126.4 rounded down */
        check_size("0.000000001T", 0, 1099);
        check_size("max", 0, UINT64_MAX);
        check_size("16777215T", 0, 16777215ull << 40);
}

static void test_bad_sizes(void)
{
        check_size("", -EINVAL, 0);
        check_size("1.5", -EINVAL, 0);  /* a fraction of a byte */
        check_size("1.G", -EINVAL, 0);
        check_size(".5G", -EINVAL, 0);
        check_size("1.5.5G", -EINVAL, 0);
        check_size("1.0000000001G", -EINVAL, 0); /* more than 9 decimals */
        check_size("-1G", -EINVAL, 0);
        check_size("1X", -EINVAL, 0);
        check_size("1G junk", -EINVAL, 0);
        check_size("16777216T", -ERANGE, 0);
}

/* tr_stat_untimed: a FIFO's type and owner through its fd and by path, a regular file's
 * size, a symlink not followed, a field the kernel does not know, a closed fd's error */
static void test_stat_untimed(void)
{
        char dir[] = "/tmp/procd-test-util.XXXXXX";
        CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
        char fifo[64], file[64], link[64];
        snprintf(fifo, sizeof fifo, "%s/fifo", dir);
        snprintf(file, sizeof file, "%s/file", dir);
        snprintf(link, sizeof link, "%s/link", dir);
        tr_stat st;
        CU_ASSERT(mkfifo(fifo, 0600) == 0);
        int rfd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        CU_ASSERT(rfd >= 0 && tr_stat_untimed(rfd, NULL, STATX_TYPE | STATX_UID, &st) == 0 && S_ISFIFO(st.mode) &&
                  st.uid == geteuid());
        CU_ASSERT(tr_stat_untimed(AT_FDCWD, fifo, STATX_TYPE | STATX_UID, &st) == 0 && S_ISFIFO(st.mode));
        CU_ASSERT(symlink(fifo, link) == 0);
        CU_ASSERT(tr_stat_untimed(AT_FDCWD, link, STATX_TYPE, &st) == 0 && S_ISLNK(st.mode));
        int fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        CU_ASSERT(fd >= 0 && write(fd, "12345", 5) == 5);
        CU_ASSERT(tr_stat_untimed(fd, "", STATX_TYPE | STATX_SIZE, &st) == 0 && S_ISREG(st.mode) && st.size_bytes == 5);
        /* STATX_BTIME: a field not every filesystem keeps: 0 or -ENODATA, never a made-up
         * answer */
        int r = tr_stat_untimed(fd, NULL, STATX_TYPE | STATX_BTIME, &st);
        CU_ASSERT(r == 0 || r == -ENODATA);
        CU_ASSERT(tr_stat_untimed(AT_FDCWD, "/nonexistent/procd-test", STATX_TYPE, &st) == -ENOENT);
        if (rfd >= 0)
                close(rfd);
        if (fd >= 0)
                close(fd);
        CU_ASSERT(tr_stat_untimed(fd, NULL, STATX_TYPE, &st) == -EBADF);
        /* tr_fstat_untimed, with the NULL path (Linux 6.11+; an older kernel's EFAULT turns
         * the flag off at once) and with fstat (the flag off): the same answers */
        for (int pass = 0; pass < 2; pass++) {
                bool null_path = pass == 0;
                int wfd = open(fifo, O_RDWR | O_CLOEXEC); /* no reader needed */
                CU_ASSERT_FATAL(wfd >= 0);
                CU_ASSERT(tr_fstat_untimed(wfd, STATX_TYPE | STATX_UID, &st, &null_path) == 0 && S_ISFIFO(st.mode) &&
                          st.uid == geteuid());
                CU_ASSERT(tr_fstat_untimed(wfd, STATX_TYPE | STATX_UID, &st, &null_path) == 0 && S_ISFIFO(st.mode));
                if (pass == 1)
                        CU_ASSERT_FALSE(null_path); /* never turned back on */
                close(wfd);
                CU_ASSERT(tr_fstat_untimed(wfd, STATX_TYPE, &st, &null_path) == -EBADF);
        }
        unlink(link);
        unlink(fifo);
        unlink(file);
        rmdir(dir);
}

/* tr_fstat agrees with fstat on an O_PATH directory (its link count: the nlink checks)
 * and a pipe; a closed fd is -EBADF.  tr_fd_is_eventfd: an eventfd yes, a pipe no. */
static void test_fstat_and_eventfd(void)
{
        char dir[] = "/tmp/procd-test-fstat.XXXXXX", sub[64];
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
        snprintf(sub, sizeof sub, "%s/sub", dir);
        CU_ASSERT_EQUAL_FATAL(mkdir(sub, 0700), 0);
        int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct stat a, b;
        CU_ASSERT(dfd >= 0 && tr_fstat(dfd, &a) == 0 && fstat(dfd, &b) == 0);
        CU_ASSERT(S_ISDIR(a.st_mode) && a.st_nlink == b.st_nlink && a.st_ino == b.st_ino);
        int p[2];
        CU_ASSERT_EQUAL_FATAL(pipe2(p, O_CLOEXEC), 0);
        CU_ASSERT(tr_fstat(p[0], &a) == 0 && S_ISFIFO(a.st_mode));
        CU_ASSERT(!tr_fd_is_eventfd(p[0]));
        int efd = eventfd(0, EFD_CLOEXEC);
        CU_ASSERT(efd >= 0 && tr_fd_is_eventfd(efd));
        close(efd);
        close(p[0]);
        close(p[1]);
        close(dfd);
        CU_ASSERT_EQUAL(tr_fstat(dfd, &a), -EBADF);
        CU_ASSERT(!tr_fd_is_eventfd(dfd));
        rmdir(sub);
        rmdir(dir);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "decimal counters", test_u64 },
                { "decimals written", test_put_u64 },
                { "sizes", test_sizes },
                { "bad sizes", test_bad_sizes },
                { "untimed stat", test_stat_untimed },
                { "path-less fstat, eventfd", test_fstat_and_eventfd },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("util parsers", NULL, NULL, tests);
}
