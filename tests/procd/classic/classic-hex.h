/* classic-hex.h - byte fixtures of the classic protocol (the .hex files of tests/fixtures/classic). */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Hex bytes of tests/fixtures/classic/<name>.hex ('#' comments), malloc'd; *n their count. */
uint8_t *ch_read_hex(const char *name, size_t *n);
