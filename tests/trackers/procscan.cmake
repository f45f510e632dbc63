# /proc scanner and /proc families (trackers/procscan.c, trackers/procfam.c).
procd_add_test(NAME test_procscan SOURCES test_procscan.c LIBS trackers LABELS unit)
procd_add_test(NAME test_procfam SOURCES test_procfam.c LIBS trackers LABELS "unit;integration" TIMEOUT 180)
# the readers of one pid (trackers/proc-read.c)
procd_add_test(NAME test_proc_read SOURCES test_proc_read.c LIBS trackers LABELS unit TIMEOUT 60)
