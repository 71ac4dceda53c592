/*
 * fuzz_host_cpu.c - libFuzzer harness for the parsers of host_cpu.c: the
 * sysfs CPU lists (gp_parse_cpu_list), cache sizes (gp_parse_cache_size)
 * and the DMI memory device entries (gp_parse_dmi_memory_device).
 *
 * Input: byte 0 picks the bit-set size of the CPU list (1 to 256 bits);
 * the rest is given whole, as an exact-size heap copy, to the DMI parser
 * and, NUL-terminated, to the two text parsers, so ASan sees any read past
 * either end. A CPU list that parses sets no bit outside the set; one built
 * from the input's bytes parses back to the bits it was built from.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "bandwidth_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

/* The bytes of a CPU set of nbits bits, padded by one byte of 0x5A that
 * the parser must leave alone. */
static void cpu_list(const char *text, size_t nbits)
{
    size_t bytes = (nbits + 7) / 8;
    unsigned char *set = malloc(bytes + 1);
    CHECK(set != NULL);
    set[bytes] = 0x5A;
    if (gp_parse_cpu_list(text, set, nbits) == 0) {
        for (size_t b = nbits; b < bytes * 8; b++)
            CHECK(!(set[b / 8] >> (b % 8) & 1));
    }
    CHECK(set[bytes] == 0x5A);
    free(set);
}

/* A list written from the input's bits parses back to them. */
static void round_trip(const uint8_t *d, size_t n)
{
    unsigned char want[32] = {0}, got[32];
    char text[1024] = "";
    size_t len = 0;
    for (size_t i = 0; i < n && i < 32; i++)
        want[i] = d[i];
    for (unsigned c = 0; c < 256; c++) {
        if (!(want[c / 8] >> (c % 8) & 1))
            continue;
        unsigned hi = c;
        while (hi + 1 < 256 && (want[(hi + 1) / 8] >> ((hi + 1) % 8) & 1))
            hi++;
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%u", len ? "," : "", c);
        if (hi > c)
            len += (size_t)snprintf(text + len, sizeof text - len, "-%u", hi);
        c = hi;
    }
    snprintf(text + len, sizeof text - len, "\n");
    CHECK(gp_parse_cpu_list(text, got, 256) == 0);
    CHECK(memcmp(got, want, sizeof want) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t nbits = (size_t)data[0] + 1;
    const uint8_t *d = data + 1;
    size_t n = size - 1;
    unsigned char *raw = malloc(n ? n : 1);
    char *text = malloc(n + 1);
    CHECK(raw && text);
    if (n)
        memcpy(raw, d, n);
    memcpy(text, d, n);
    text[n] = '\0';

    gp_dmi_module m = {7, 7, 7};
    int r = gp_parse_dmi_memory_device(raw, n, &m);
    CHECK(r == 0 || r == -1);
    if (r == 0)
        CHECK(m.width_bits >= 0 && m.width_bits < 0xFFFF && m.mts >= 0 && (m.present == 0 || m.present == 1));
    uint64_t bytes = 0;
    r = gp_parse_cache_size(text, &bytes);
    CHECK(r == 0 || r == -1);
    cpu_list(text, nbits);
    round_trip(d, n);
    free(raw);
    free(text);
    return 0;
}
