# Each program's --help options against its man page and bash completion (issue 17 §4).
procd_add_test(NAME test_options_docs COMMAND ${CMAKE_CURRENT_LIST_DIR}/test_options_docs.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR} LABELS unit TIMEOUT 60 NO_SWEEP)
