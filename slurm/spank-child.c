#include "spank-child.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static void close_dir(DIR **d)
{
        if (*d)
                closedir(*d);
}

static void close_file(FILE **f)
{
        if (*f)
                fclose(*f);
}

pid_t ps_only_child(pid_t parent)
{
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task", (int) parent);
        __attribute__((cleanup(close_dir))) DIR *d = opendir(path);
        if (!d)
                return -errno;
        pid_t found = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
                if (e->d_name[0] == '.')
                        continue;
                char children[96];
                snprintf(children, sizeof children, "/proc/%d/task/%s/children", (int) parent, e->d_name);
                __attribute__((cleanup(close_file))) FILE *f = fopen(children, "re");
                long pid;
                while (f && fscanf(f, "%ld", &pid) == 1) {
                        if (found || pid <= 1)
                                return 0;
                        found = (pid_t) pid;
                }
        }
        return found;
}
