# procd/core/admission.c: the slot caps both transports share.
procd_add_test(NAME test_admission SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_admission.c
               LIBS procd_core PkgConfig::GLIB LABELS unit)
