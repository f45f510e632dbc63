# procd/dbus/: the D-Bus transport under bad calls, floods and disconnects.
procd_add_test(NAME test_procd_dbus SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_procd_dbus.c
               LIBS procd_test_harness LABELS integration TIMEOUT 300)
add_dependencies(test_procd_dbus procd)
