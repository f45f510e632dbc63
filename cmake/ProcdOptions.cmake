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
