# starter/clone-vm.c and guard.c: the CLONE_VM child's stack and clone3 trampoline, and the
# arguments `procd-starter --guard-cleanup` refuses (unit tests; the guard end to end is
# test_starter_crash's).
procd_add_test(NAME test_clone_vm SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_clone_vm.c LIBS procd_starter LABELS unit)
procd_add_test(NAME test_guard SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_guard.c LIBS procd_starter LABELS unit)
