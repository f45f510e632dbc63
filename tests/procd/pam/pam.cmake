# pam_procd_adopt.so with pamtester, a test user and PAM service files the test makes and
# removes; real jobs through procd-starter.  77 = skipped (no root, no pamtester).
procd_add_test(NAME test_pam_adopt SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_pam_adopt.c
               LIBS procd_test_harness LABELS "integration;lane" TIMEOUT 300)
add_dependencies(test_pam_adopt procd procd-starter pam_procd_adopt)
if(PROCD_SANITIZE)
  # the module carries ASan; pamtester does not: the test preloads the runtime into it
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
                  OUTPUT_VARIABLE _asan_rt OUTPUT_STRIP_TRAILING_WHITESPACE)
  target_compile_definitions(test_pam_adopt PRIVATE PROCD_ASAN_RUNTIME="${_asan_rt}")
endif()
