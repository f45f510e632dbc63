# procd/core/registry.c and family-usage.c on their own (no daemon): registration, lookup,
# placement, unregister folding, watchers; a subtree's usage, each process once.
add_library(procd_regtest STATIC ${CMAKE_CURRENT_LIST_DIR}/regtest.c)
target_link_libraries(procd_regtest PUBLIC procd_core procd_testsupport PkgConfig::CUNIT)
procd_add_test(NAME test_registry SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_registry.c
               LIBS procd_regtest procd_test_harness LABELS unit TIMEOUT 120)
procd_add_test(NAME test_family_usage SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_family_usage.c
               LIBS procd_regtest procd_test_harness LABELS unit TIMEOUT 120)
