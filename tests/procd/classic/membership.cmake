# /proc families' membership as condor_procd keeps it (registry-members.c, registry-tree.c),
# through the classic client with family cgroups off.
procd_add_test(NAME test_classic_membership SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_classic_membership.c
               LIBS procd_classic_client LABELS integration TIMEOUT 300)
add_dependencies(test_classic_membership procd)

# The family tree against a reference model (condor_procd's rules) over generated inputs,
# with family cgroups off and on.
procd_add_test(NAME test_classic_model SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_classic_model.c
               LIBS procd_classic_client LABELS integration TIMEOUT 600)
add_dependencies(test_classic_model procd)

# Inputs in the format of HTCondor's own model-based procd test: the fixture here; HTCondor's
# procd_test_input and generated inputs through `make model-test CONDOR_SRC=...`.
procd_add_test(NAME test_classic_inputs SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_classic_inputs.c
               LIBS procd_classic_client LABELS integration TIMEOUT 300)
add_dependencies(test_classic_inputs procd)
