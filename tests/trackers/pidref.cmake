# the process reference (trackers/pidref.c)
procd_add_test(NAME test_pidref SOURCES test_pidref.c LIBS trackers LABELS unit TIMEOUT 60)
