/* Reports the libc a toolchain's binaries actually link, one key=value per line. */
#define _GNU_SOURCE 1
#include <stdio.h>
#include <string.h>
#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

int main(void) {
#if defined(__GLIBC__)
    printf("libc=glibc\nlibc_version=%s\n", gnu_get_libc_version());
#elif defined(__KLIBC__)
    printf("libc=klibc\n");
#elif defined(__dietlibc__)
    printf("libc=dietlibc\n");
#elif defined(__UCLIBC__)
    printf("libc=uclibc\n");
#elif defined(__BIONIC__)
    printf("libc=bionic\n");
#elif defined(__linux__) && defined(__DEFINED_size_t)
    /* musl defines no version macro on purpose (its loader prints the version when run), but its
     * bits/alltypes.h marks each type it has defined, which no other libc does. */
    printf("libc=musl\n");
#else
    printf("libc=unknown\n");
#endif
    FILE *maps = fopen("/proc/self/maps", "r");
    if (maps) {
        char line[4096];
        while (fgets(line, sizeof line, maps)) {
            char *path = strchr(line, '/');
            if (path && (strstr(path, "/libc.so") || strstr(path, "/libc-") || strstr(path, "ld-musl"))) {
                path[strcspn(path, "\n")] = '\0';
                printf("libc_path=%s\n", path);
                break;
            }
        }
        fclose(maps);
    }
    return 0;
}
