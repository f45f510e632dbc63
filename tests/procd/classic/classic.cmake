# procd/classic/: the condor_procd transport: decoder and encoder on byte fixtures, the command
# line (unit); the daemon started with -A and driven through its FIFOs
# (integration).  They link procd_classic / procd_core only: no libdbus.
add_library(procd_classic_hex STATIC ${CMAKE_CURRENT_LIST_DIR}/classic-hex.c)
target_link_libraries(procd_classic_hex PUBLIC procd_testsupport PkgConfig::CUNIT)
target_include_directories(procd_classic_hex PUBLIC ${CMAKE_CURRENT_LIST_DIR})

procd_add_test(NAME test_classic_decode SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_classic_decode.c
               LIBS procd_classic_hex procd_classic LABELS unit)
procd_add_test(NAME test_classic_encode SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_classic_encode.c
               LIBS procd_classic_hex procd_classic LABELS unit)
procd_add_test(NAME test_classic_args SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_classic_args.c
               LIBS procd_classic PkgConfig::GLIB LABELS unit)
procd_add_test(NAME test_classic_server SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_classic_server.c
               LIBS procd_classic_client procd_test_harness LABELS integration TIMEOUT 300)
add_dependencies(test_classic_server procd)
