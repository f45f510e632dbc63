# pam_procd_adopt's choice of the family a login joins (Slurm steps count as one job).
procd_add_test(NAME test_job_pick SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_job_pick.c
               ${PROJECT_SOURCE_DIR}/procd/pam/job-pick.c LIBS procd_client LABELS unit)
