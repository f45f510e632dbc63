# The classic (condor_procd named-pipe) protocol driven by an independent test client
# (classic-client.c; shares nothing with the daemon's encoder).  PROCD_CLASSIC_DAEMON=<path of
# HTCondor's condor_procd> runs the same tests against the original daemon.
add_library(procd_classic_client STATIC ${CMAKE_CURRENT_LIST_DIR}/classic-client.c
            ${CMAKE_CURRENT_LIST_DIR}/classic-procs.c)
target_include_directories(procd_classic_client PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(procd_classic_client PUBLIC procd_testsupport trackers)

procd_add_test(NAME test_classic SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_classic.c
               LIBS procd_classic_client procd_test_harness LABELS integration TIMEOUT 300)
add_dependencies(test_classic procd)

procd_add_test(NAME test_classic_condor SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_classic_condor.c
               LIBS procd_classic_client procd_test_harness LABELS integration TIMEOUT 300)
add_dependencies(test_classic_condor procd)

procd_add_test(NAME test_classic_authority SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_classic_authority.c
               LIBS procd_classic_client procd_test_harness LABELS integration TIMEOUT 300)
add_dependencies(test_classic_authority procd)
