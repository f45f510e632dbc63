# pam_procd_adopt.so with pamtester, a test user and PAM service files the test makes and
# removes; real jobs through procd-starter.  77 = skipped (no root, no pamtester).
procd_add_test(NAME test_pam_adopt SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_pam_adopt.c
               LIBS procd_test_harness LABELS integration TIMEOUT 300)
set_tests_properties(test_pam_adopt PROPERTIES SKIP_RETURN_CODE 77)
add_dependencies(test_pam_adopt procd procd-starter pam_procd_adopt)
