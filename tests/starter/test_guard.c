/* test_guard.c - starter/guard.c: what `procd-starter --guard-cleanup` refuses.
 *
 * The CLONE_VM guard execs it with arguments its starter built; anything else is a usage
 * error (exit 2) before any cgroup or file is touched.  The cleanup itself, and the guard's
 * two forms, run end to end in test_starter_crash. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "starter/guard.h"
#include "testsupport.h"

/* st_guard_cleanup_main(argv) in a child (it renames its process); its exit code. */
static int cleanup_exit(char **argv)
{
        int argc = 0;
        while (argv[argc])
                argc++;
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
                freopen("/dev/null", "w", stderr);
                _exit(st_guard_cleanup_main(argc, argv));
        }
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
                return -1;
        return WEXITSTATUS(st);
}

static void check_refused(const char *what, char **argv)
{
        int code = cleanup_exit(argv);
        if (code != 2)
                printf("\n    %s: exit %d, want 2 ", what, code);
        CU_ASSERT_EQUAL(code, 2);
}

static void test_refused(void)
{
        char *few[] = { "procd-guard", "--guard-cleanup", "123", "-1", "/t", "/t/job", "", NULL };
        char *odd[] = { "procd-guard", "--guard-cleanup", "123", "-1", "/t", "/t/job", "", "", "J", NULL };
        char *pid1[] = { "procd-guard", "--guard-cleanup", "1", "-1", "/t", "/t/job", "", "", NULL };
        char *pidx[] = { "procd-guard", "--guard-cleanup", "12x", "-1", "/t", "/t/job", "", "", NULL };
        char *lock[] = { "procd-guard", "--guard-cleanup", "123", "fd", "/t", "/t/job", "", "", NULL };
        char *rel[] = { "procd-guard", "--guard-cleanup", "123", "-1", "t", "/t/job", "", "", NULL };
        char *relj[] = { "procd-guard", "--guard-cleanup", "123", "-1", "/t", "job", "", "", NULL };
        char *kind[] = { "procd-guard", "--guard-cleanup", "123", "-1", "/t", "/t/job", "", "", "X", "/sys/fs/cgroup",
                         NULL };
        check_refused("too few arguments", few);
        check_refused("a mount point without its kind", odd);
        check_refused("pid 1", pid1);
        check_refused("pid not a number", pidx);
        check_refused("lock fd not a number", lock);
        check_refused("relative <top>", rel);
        check_refused("relative job path", relj);
        check_refused("neither J nor T", kind);
}

int main(void)
{
        CU_TestInfo tests[] = {
                { "--guard-cleanup: bad arguments are usage errors (exit 2)", test_refused },
                CU_TEST_INFO_NULL,
        };
        return ts_run_suite("guard", NULL, NULL, tests);
}
