# Warnings as errors everywhere; an ASan+UBSan configuration (-DPROCD_SANITIZE=ON) that CI runs.
# -Wno-format-truncation: error messages and paths are cut on purpose at their buffer size.
option(PROCD_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

add_compile_options(-Wall -Wextra -Werror -Wshadow -Wno-unused-parameter
                    -Wformat=2 -Wno-format-nonliteral -Wno-format-truncation -D_GNU_SOURCE)

if(PROCD_SANITIZE)
  add_compile_definitions(PROCD_SANITIZE=1)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()

# Link-time optimization, but for the sanitizer build: a GET_USAGE crosses many small
# functions of separate files (transport, command layer, registry, trackers), and LTO
# inlines across them (issue 20: 7.5% fewer instructions a request, ~0.2 us of ~16.5 on the
# hybrid host; NOTES 14.26).  -DPROCD_LTO=OFF builds without it.
option(PROCD_LTO "Link-time optimization (never with PROCD_SANITIZE)" ON)
if(PROCD_LTO AND NOT PROCD_SANITIZE)
  include(CheckIPOSupported)
  check_ipo_supported(RESULT procd_ipo OUTPUT procd_ipo_why LANGUAGES C)
  if(procd_ipo)
    set(CMAKE_INTERPROCEDURAL_OPTIMIZATION ON)
  else()
    message(STATUS "procd: no link-time optimization here: ${procd_ipo_why}")
  endif()
endif()
