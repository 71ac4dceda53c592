/*
 * test_nvml.c - lib/nvml.c on its own: the loader of libnvidia-ml.so.1, the
 * lookup of a CUDA device's NVML handle, the memory and integer queries,
 * the messages.
 *
 * The queries are driven through a table of functions written here (a
 * scripted NVML), so that each answer NVML may give can be chosen: a
 * failure, a missing function, a value at a bound. Every scripted function
 * writes its outputs whether it succeeds or not (NVML documents them only
 * for NVML_SUCCESS): whatever the library reads of a failed call shows.
 *
 * The loader is driven through fake libnvidia-ml.so.1 builds
 * (tests/fakelib.cmake) that the gp_test_dlopen seam puts in place of the
 * system's: a complete one, one lacking nvmlInit_v2 or nvmlShutdown, one
 * whose nvmlInit_v2 fails, ones with only older versions of a function.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dlfcn.h>

#include "internal.h"
#include "nvml.h"

#include "fakelib_dir.h" /* GP_FAKELIB_DIR, found where the build is */

/* ---- the scripted NVML ------------------------------------------------- */

#define FAIL 999 /* an NVML error of no special meaning */

static char gpu_h, mig_h, other_h; /* handles: their addresses */

static struct script {
    /* nvmlDeviceGetHandleByUUID, by prefix */
    int gpu_uuid_rc, mig_uuid_rc;
    unsigned uuid_calls;
    /* nvmlDeviceGetHandleByPciBusId_v2 */
    int pci_rc;
    unsigned pci_calls;
    /* nvmlDeviceGetIndex: the GPU's and the MIG instance's */
    int gpu_index_rc, mig_index_rc;
    unsigned gpu_index, mig_index;
    /* nvmlDeviceGetUUID: text, or `fill` bytes of 'U' without a NUL */
    int uuid_rc;
    const char *uuid;
    size_t fill;
    /* nvmlDeviceGetMigMode */
    int mig_mode_rc;
    unsigned mig_mode;
    /* nvmlDeviceGetDeviceHandleFromMigDeviceHandle */
    int parent_rc;
    /* nvmlDeviceGetMaxMigDeviceCount, nvmlDeviceGetMigDeviceHandleByIndex
     * (which succeeds for the first `instances` indices) */
    int max_mig_rc;
    unsigned max_mig, instances, by_index_calls;
    /* memory */
    int v2_rc, v1_rc;
    unsigned v2_version_seen;
    gp_nvml_memory_v2 v2;
    gp_nvml_memory_v1 v1;
    /* the integer queries: result and value */
    int q_rc;
    unsigned q_value;
    int temp_sensor_seen;
    /* nvmlErrorString */
    const char *error_string;
} sc;

static int s_by_uuid(const char *uuid, void **h)
{
    sc.uuid_calls++;
    int gpu = strncmp(uuid, "GPU-", 4) == 0;
    *h = gpu ? (void *)&gpu_h : (void *)&mig_h;
    return gpu ? sc.gpu_uuid_rc : sc.mig_uuid_rc;
}
static int s_by_pci(const char *pci, void **h)
{
    (void)pci;
    sc.pci_calls++;
    *h = &gpu_h;
    return sc.pci_rc;
}
static int s_index(void *h, unsigned *v)
{
    *v = h == &mig_h ? sc.mig_index : sc.gpu_index;
    return h == &mig_h ? sc.mig_index_rc : sc.gpu_index_rc;
}
static int s_uuid(void *h, char *buf, unsigned len)
{
    (void)h;
    if (sc.fill)
        memset(buf, 'U', sc.fill < len ? sc.fill : len);
    else
        snprintf(buf, len, "%s", sc.uuid);
    return sc.uuid_rc;
}
static int s_mig_mode(void *h, unsigned *cur, unsigned *pending)
{
    (void)h;
    *cur = sc.mig_mode;
    *pending = sc.mig_mode;
    return sc.mig_mode_rc;
}
static int s_parent(void *h, void **parent)
{
    (void)h;
    *parent = sc.parent_rc == GP_NVML_SUCCESS ? (void *)&gpu_h : (void *)&other_h;
    return sc.parent_rc;
}
static int s_max_mig(void *h, unsigned *v)
{
    (void)h;
    *v = sc.max_mig;
    return sc.max_mig_rc;
}
static int s_mig_by_index(void *h, unsigned i, void **m)
{
    (void)h;
    sc.by_index_calls++;
    *m = &mig_h;
    return i < sc.instances ? GP_NVML_SUCCESS : GP_NVML_ERROR_NOT_FOUND;
}
static int s_mem_v2(void *h, gp_nvml_memory_v2 *m)
{
    (void)h;
    sc.v2_version_seen = m->version;
    unsigned version = m->version;
    *m = sc.v2;
    m->version = version;
    return sc.v2_rc;
}
static int s_mem_v1(void *h, gp_nvml_memory_v1 *m)
{
    (void)h;
    *m = sc.v1;
    return sc.v1_rc;
}
static int s_uint(void *h, unsigned *v)
{
    (void)h;
    *v = sc.q_value;
    return sc.q_rc;
}
static int s_util(void *h, gp_nvml_utilization *u)
{
    (void)h;
    u->gpu = sc.q_value;
    u->memory = sc.q_value + 1;
    return sc.q_rc;
}
static int s_temp(void *h, int sensor, unsigned *t)
{
    (void)h;
    sc.temp_sensor_seen = sensor;
    *t = sc.q_value;
    return sc.q_rc;
}
static int s_procs(void *h, unsigned *count, void *infos)
{
    (void)h;
    assert_null(infos); /* only the count is asked */
    *count = sc.q_value;
    return sc.q_rc;
}
static const char *s_error_string(int rc)
{
    (void)rc;
    return sc.error_string;
}

/* A usable NVML answering from the script; the script reset to a whole GPU
 * (not in MIG mode) found by its UUID, every query succeeding. */
static gp_nvml nvml(void)
{
    memset(&sc, 0, sizeof sc);
    sc.gpu_uuid_rc = GP_NVML_SUCCESS;
    sc.mig_uuid_rc = GP_NVML_ERROR_NOT_FOUND;
    sc.gpu_index = 3;
    sc.mig_index = 1;
    sc.uuid = "GPU-5e1e0000-4200-4000-8000-00000000000b";
    sc.mig_mode = 0;
    sc.error_string = "Not Found";
    gp_nvml n;
    memset(&n, 0, sizeof n);
    n.tried = n.ok = 1;
    n.f.ErrorString = s_error_string;
    n.f.DeviceGetHandleByUUID = s_by_uuid;
    n.f.DeviceGetHandleByPciBusId = s_by_pci;
    n.f.DeviceGetIndex = s_index;
    n.f.DeviceGetUUID = s_uuid;
    n.f.DeviceGetMigMode = s_mig_mode;
    n.f.DeviceGetDeviceHandleFromMigDeviceHandle = s_parent;
    n.f.DeviceGetMaxMigDeviceCount = s_max_mig;
    n.f.DeviceGetMigDeviceHandleByIndex = s_mig_by_index;
    n.f.DeviceGetMemoryInfo_v2 = s_mem_v2;
    n.f.DeviceGetMemoryInfo = s_mem_v1;
    n.f.DeviceGetUtilizationRates = s_util;
    n.f.DeviceGetTemperature = s_temp;
    n.f.DeviceGetPowerUsage = s_uint;
    n.f.DeviceGetEnforcedPowerLimit = s_uint;
    n.f.DeviceGetComputeRunningProcesses = s_procs;
    n.f.DeviceGetCurrPcieLinkGeneration = s_uint;
    n.f.DeviceGetCurrPcieLinkWidth = s_uint;
    n.f.DeviceGetMaxPcieLinkGeneration = s_uint;
    n.f.DeviceGetMaxPcieLinkWidth = s_uint;
    return n;
}

#define HEX "5e1e0000-4200-4000-8000-00000000000b"

/* gp_nvml_find into a device record followed by bytes that are not NUL,
 * so that a UUID left unterminated would run into them. */
typedef struct found {
    gp_nvml_device d;
    char after[8];
} found;

static int find(const gp_nvml *n, const char *hex, const char *pci, found *f, char *why,
                size_t why_size)
{
    memset(f, 'x', sizeof *f);
    strcpy(why, "(untouched)");
    return gp_nvml_find(n, hex, pci, &f->d, why, why_size);
}

static void assert_facts_unknown(const gp_nvml_device *d)
{
    assert_int_equal(d->index, -1);
    assert_int_equal(d->mig_index, -1);
    assert_int_equal(d->mig_mode, -1);
    assert_int_equal(d->mig_count, -1);
}

/* ---- messages ---------------------------------------------------------- */

static void error_message(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    char buf[192];
    gp_nvml_error(&n, "nvmlDeviceGetUUID", GP_NVML_ERROR_NOT_FOUND, buf, sizeof buf);
    assert_string_equal(buf, "nvmlDeviceGetUUID failed: Not Found (NVML error 6)");

    /* One character is a description; none, or no text, is not. */
    sc.error_string = "X";
    gp_nvml_error(&n, "nvmlShutdown", FAIL, buf, sizeof buf);
    assert_string_equal(buf, "nvmlShutdown failed: X (NVML error 999)");
    sc.error_string = "";
    gp_nvml_error(&n, "nvmlShutdown", FAIL, buf, sizeof buf);
    assert_string_equal(buf, "nvmlShutdown failed: no description (NVML error 999)");
    sc.error_string = NULL;
    gp_nvml_error(&n, "nvmlShutdown", FAIL, buf, sizeof buf);
    assert_string_equal(buf, "nvmlShutdown failed: no description (NVML error 999)");
    n.f.ErrorString = NULL;
    gp_nvml_error(&n, "nvmlShutdown", FAIL, buf, sizeof buf);
    assert_string_equal(buf, "nvmlShutdown failed: no description (NVML error 999)");

    /* A function the library lacks is said so, not described as an NVML
     * error (there is no NVML code for it). */
    gp_nvml_error(&n, "nvmlDeviceGetIndex", GP_NVML_MISSING, buf, sizeof buf);
    assert_string_equal(buf, "libnvidia-ml.so.1 lacks nvmlDeviceGetIndex");
}

/* NVML's description is cut after 80 bytes, and made printable. */
static void error_message_cut(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    char text[96], buf[192], want[192];
    memset(text, 'e', 80);
    text[80] = '\0';
    sc.error_string = text;
    gp_nvml_error(&n, "f", FAIL, buf, sizeof buf);
    snprintf(want, sizeof want, "f failed: %s (NVML error 999)", text);
    assert_string_equal(buf, want);

    text[80] = 'E';
    text[81] = '\0';
    gp_nvml_error(&n, "f", FAIL, buf, sizeof buf);
    text[80] = '\0';
    snprintf(want, sizeof want, "f failed: %s... (NVML error 999)", text);
    assert_string_equal(buf, want);

    sc.error_string = "bad\ttext\x1b[31m";
    gp_nvml_error(&n, "f", FAIL, buf, sizeof buf);
    assert_string_equal(buf, "f failed: bad?text?[31m (NVML error 999)");
}

/* ---- gp_nvml_find: a whole GPU ------------------------------------------ */

static void find_gpu_by_uuid(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    found f;
    char why[256];
    assert_int_equal(find(&n, HEX, "0000:19:00.0", &f, why, sizeof why), 1);
    assert_string_equal(why, "(untouched)");
    assert_ptr_equal(f.d.h, &gpu_h);
    assert_ptr_equal(f.d.gpu, &gpu_h);
    assert_int_equal(f.d.mig, 0);
    assert_int_equal(f.d.index, 3);
    assert_int_equal(f.d.mig_index, -1);
    assert_int_equal(f.d.mig_mode, 0);
    assert_int_equal(f.d.mig_count, 0);
    assert_string_equal(f.d.gpu_uuid, "GPU-5e1e0000-4200-4000-8000-00000000000b");
    assert_int_equal(sc.uuid_calls, 1);
    assert_int_equal(sc.pci_calls, 0);
    assert_int_equal(sc.by_index_calls, 0);
}

/* Facts NVML fails to give are unknown, whatever the failed call wrote. */
static void find_gpu_facts_failing(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    found f;
    char why[256];
    sc.gpu_index_rc = sc.uuid_rc = sc.mig_mode_rc = FAIL;
    sc.mig_mode = 1; /* written, but the call failed */
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_ptr_equal(f.d.h, &gpu_h);
    assert_int_equal(f.d.index, -1);
    assert_int_equal(f.d.mig_mode, -1);
    assert_int_equal(f.d.mig_count, -1);
    assert_string_equal(f.d.gpu_uuid, "");
    assert_int_equal(sc.by_index_calls, 0);

    /* The same with the functions missing. */
    n.f.DeviceGetIndex = NULL;
    n.f.DeviceGetUUID = NULL;
    n.f.DeviceGetMigMode = NULL;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.index, -1);
    assert_int_equal(f.d.mig_mode, -1);
    assert_int_equal(f.d.mig_count, -1);
    assert_string_equal(f.d.gpu_uuid, "");
}

/* An NVML index is taken up to 4096. */
static void find_gpu_index_bound(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    found f;
    char why[256];
    sc.gpu_index = 4096;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.index, 4096);
    sc.gpu_index = 4097;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.index, -1);
    sc.gpu_index = 0;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.index, 0);
}

/* A UUID that fills the buffer without a NUL is cut to terminate it. */
static void find_gpu_uuid_unterminated(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    found f;
    char why[256];
    sc.fill = sizeof f.d.gpu_uuid;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(strlen(f.d.gpu_uuid), sizeof f.d.gpu_uuid - 1);
    assert_int_equal(f.d.gpu_uuid[0], 'U');
    assert_int_equal(f.after[0], 'x');
}

/* A GPU in MIG mode: its instances counted, up to 64. */
static void find_gpu_mig_count(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    found f;
    char why[256];
    sc.mig_mode = 1;
    sc.max_mig = 7;
    sc.instances = 3;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.mig, 0);
    assert_int_equal(f.d.mig_mode, 1);
    assert_int_equal(f.d.mig_count, 3);
    assert_int_equal(sc.by_index_calls, 7);

    sc.max_mig = 64;
    sc.instances = 64;
    sc.by_index_calls = 0;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.mig_count, 64);
    assert_int_equal(sc.by_index_calls, 64);

    sc.max_mig = 65; /* not believed */
    sc.by_index_calls = 0;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.mig_mode, 1);
    assert_int_equal(f.d.mig_count, -1);
    assert_int_equal(sc.by_index_calls, 0);

    sc.max_mig = 7; /* written, but the call failed */
    sc.max_mig_rc = FAIL;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.mig_count, -1);
    assert_int_equal(sc.by_index_calls, 0);

    sc.max_mig_rc = GP_NVML_SUCCESS; /* either counting function missing */
    n.f.DeviceGetMigDeviceHandleByIndex = NULL;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.mig_count, -1);
    n.f.DeviceGetMigDeviceHandleByIndex = s_mig_by_index;
    n.f.DeviceGetMaxMigDeviceCount = NULL;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.mig_count, -1);
    assert_int_equal(sc.by_index_calls, 0);

    sc.mig_mode = 2; /* a mode that is not "enabled" */
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.mig_mode, 0);
    assert_int_equal(f.d.mig_count, 0);
}

/* ---- gp_nvml_find: a MIG instance --------------------------------------- */

/* nvml(), with the UUID a MIG instance's (only "MIG-" finds it) on a GPU
 * in MIG mode. */
static gp_nvml nvml_mig(void)
{
    gp_nvml n = nvml();
    sc.gpu_uuid_rc = GP_NVML_ERROR_NOT_FOUND;
    sc.mig_uuid_rc = GP_NVML_SUCCESS;
    sc.mig_mode = 1;
    return n;
}

static void find_mig_instance(void **state)
{
    (void)state;
    gp_nvml n = nvml_mig();
    found f;
    char why[256];
    sc.max_mig = 7;
    sc.instances = 2;
    assert_int_equal(find(&n, HEX, "0000:19:00.0", &f, why, sizeof why), 1);
    assert_ptr_equal(f.d.h, &mig_h);
    assert_ptr_equal(f.d.gpu, &gpu_h);
    assert_int_equal(f.d.mig, 1);
    assert_int_equal(f.d.mig_index, 1);
    assert_int_equal(f.d.index, 3);
    assert_int_equal(f.d.mig_mode, 1);
    assert_int_equal(f.d.mig_count, 2);
    assert_int_equal(sc.uuid_calls, 2);
    assert_int_equal(sc.pci_calls, 0); /* never by bus id */

    /* Its GPU said MIG is off, or could not say: an instance exists, so
     * the mode is on. */
    sc.mig_mode = 0;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.mig_mode, 1);
    assert_int_equal(f.d.mig_count, 2);
    sc.mig_mode_rc = FAIL;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.mig_mode, 1);
}

/* A MIG instance's index is taken up to 64, and only when NVML gives it. */
static void find_mig_index(void **state)
{
    (void)state;
    gp_nvml n = nvml_mig();
    found f;
    char why[256];
    sc.mig_index = 64;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.mig_index, 64);
    sc.mig_index = 65;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.mig_index, -1);
    sc.mig_index = 0;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.mig_index, 0);
    sc.mig_index = 5; /* written, but the call failed */
    sc.mig_index_rc = FAIL;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_int_equal(f.d.mig_index, -1);
    assert_int_equal(f.d.index, 3); /* its GPU's still known */
}

/* A MIG instance whose GPU NVML cannot name: the instance is found, its
 * GPU's facts are unknown, its mode is MIG. */
static void find_mig_without_parent(void **state)
{
    (void)state;
    gp_nvml n = nvml_mig();
    found f;
    char why[256];
    sc.parent_rc = FAIL;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_ptr_equal(f.d.h, &mig_h);
    assert_null(f.d.gpu);
    assert_int_equal(f.d.mig, 1);
    assert_int_equal(f.d.mig_index, 1);
    assert_int_equal(f.d.mig_mode, 1);
    assert_int_equal(f.d.index, -1);
    assert_int_equal(f.d.mig_count, -1);
    assert_string_equal(f.d.gpu_uuid, "");

    n.f.DeviceGetDeviceHandleFromMigDeviceHandle = NULL;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 1);
    assert_null(f.d.gpu);
    assert_int_equal(f.d.mig_mode, 1);
}

/* ---- gp_nvml_find: by PCI bus id, and not found ------------------------- */

#define NOT_FOUND_UUID "nvmlDeviceGetHandleByUUID failed: Not Found (NVML error 6)"

static void find_not_found(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    found f;
    char why[256];
    sc.gpu_uuid_rc = sc.mig_uuid_rc = GP_NVML_ERROR_NOT_FOUND;

    /* No bus id to try: the UUID's failure is the reason. */
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 0);
    assert_string_equal(why, NOT_FOUND_UUID);
    assert_null(f.d.h);
    assert_null(f.d.gpu);
    assert_facts_unknown(&f.d);
    assert_int_equal(find(&n, HEX, "", &f, why, sizeof why), 0);
    assert_string_equal(why, NOT_FOUND_UUID);
    n.f.DeviceGetHandleByPciBusId = NULL;
    assert_int_equal(find(&n, HEX, "0000:19:00.0", &f, why, sizeof why), 0);
    assert_string_equal(why, NOT_FOUND_UUID);
    assert_int_equal(sc.pci_calls, 0);

    /* The bus id fails too: both reasons. */
    n.f.DeviceGetHandleByPciBusId = s_by_pci;
    sc.pci_rc = FAIL;
    sc.error_string = "E";
    assert_int_equal(find(&n, HEX, "0", &f, why, sizeof why), 0);
    assert_string_equal(why, "nvmlDeviceGetHandleByUUID failed: E (NVML error 6); "
                             "nvmlDeviceGetHandleByPciBusId_v2 failed: E (NVML error 999)");
    assert_int_equal(sc.pci_calls, 1);
    assert_facts_unknown(&f.d);

    /* No UUID function, no bus id: NVML lacks the lookup. */
    n.f.DeviceGetHandleByUUID = NULL;
    assert_int_equal(find(&n, HEX, NULL, &f, why, sizeof why), 0);
    assert_string_equal(why, "libnvidia-ml.so.1 lacks nvmlDeviceGetHandleByUUID");
}

/* A device whose UUID is unknown (or NVML does not know it) is looked up
 * by bus id: a whole GPU there is the device. */
static void find_by_pci(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    found f;
    char why[256];
    assert_int_equal(find(&n, "", "0000:19:00.0", &f, why, sizeof why), 1);
    assert_int_equal(sc.uuid_calls, 0);
    assert_int_equal(sc.pci_calls, 1);
    assert_ptr_equal(f.d.h, &gpu_h);
    assert_int_equal(f.d.index, 3);
    assert_int_equal(f.d.mig_mode, 0);
    assert_int_equal(find(&n, NULL, "0000:19:00.0", &f, why, sizeof why), 1);
    assert_int_equal(sc.uuid_calls, 0);

    sc.gpu_uuid_rc = sc.mig_uuid_rc = GP_NVML_ERROR_NOT_FOUND;
    assert_int_equal(find(&n, HEX, "0000:19:00.0", &f, why, sizeof why), 1);
    assert_int_equal(sc.uuid_calls, 2);
    assert_int_equal(f.d.mig, 0);

    /* The MIG mode query failing (whatever it wrote) does not make the
     * GPU one in MIG mode. */
    sc.mig_mode = 1;
    sc.mig_mode_rc = FAIL;
    assert_int_equal(find(&n, HEX, "0000:19:00.0", &f, why, sizeof why), 1);
    assert_ptr_equal(f.d.h, &gpu_h);
}

/* The GPU at the bus id is in MIG mode: the CUDA device is one of its
 * instances, which the bus id cannot tell. */
static void find_by_pci_mig_gpu(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    found f;
    char why[256];
    sc.gpu_uuid_rc = sc.mig_uuid_rc = GP_NVML_ERROR_NOT_FOUND;
    sc.mig_mode = 1;
    assert_int_equal(find(&n, HEX, "0000:19:00.0", &f, why, sizeof why), 0);
    assert_string_equal(why, NOT_FOUND_UUID ", and the GPU at its PCI bus id is in MIG "
                             "mode (the device is one of its instances)");
    assert_null(f.d.h);
    assert_facts_unknown(&f.d);
}

/* ---- memory -------------------------------------------------------------- */

static void fill(gp_nvml_mem *m)
{
    memset(m, 0x5a, sizeof *m);
}

static void memory_v2(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    gp_nvml_mem m;
    const char *call = NULL;
    sc.v2 = (gp_nvml_memory_v2){0, 1000, 40, 700, 260};
    fill(&m);
    assert_int_equal(gp_nvml_memory(&n, &gpu_h, &m, &call), GP_NVML_SUCCESS);
    assert_int_equal(sc.v2_version_seen, GP_NVML_MEMORY_V2);
    assert_string_equal(call, "nvmlDeviceGetMemoryInfo_v2");
    assert_int_equal(m.total, 960); /* CUDA's total: without the reserve */
    assert_int_equal(m.reserved, 40);
    assert_int_equal(m.free, 700);
    assert_int_equal(m.used, 260);
    assert_int_equal(m.have_reserved, 1);

    /* A reserve larger than the total is cut to it. */
    sc.v2 = (gp_nvml_memory_v2){0, 1000, 1001, 0, 0};
    assert_int_equal(gp_nvml_memory(&n, &gpu_h, &m, &call), GP_NVML_SUCCESS);
    assert_int_equal(m.reserved, 1000);
    assert_int_equal(m.total, 0);
    sc.v2 = (gp_nvml_memory_v2){0, 1000, 1000, 0, 0};
    assert_int_equal(gp_nvml_memory(&n, &gpu_h, &m, &call), GP_NVML_SUCCESS);
    assert_int_equal(m.reserved, 1000);
    assert_int_equal(m.total, 0);
}

static void memory_v1(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    gp_nvml_mem m;
    const char *call = NULL;
    sc.v2 = (gp_nvml_memory_v2){0, 1000, 40, 700, 260}; /* written, but failed */
    sc.v2_rc = FAIL;
    sc.v1 = (gp_nvml_memory_v1){1000, 600, 400};
    fill(&m);
    assert_int_equal(gp_nvml_memory(&n, &gpu_h, &m, &call), GP_NVML_SUCCESS);
    assert_string_equal(call, "nvmlDeviceGetMemoryInfo");
    assert_int_equal(m.total, 1000);
    assert_int_equal(m.free, 600);
    assert_int_equal(m.used, 400);
    assert_int_equal(m.reserved, 0);
    assert_int_equal(m.have_reserved, 0);

    n.f.DeviceGetMemoryInfo_v2 = NULL; /* an older driver */
    fill(&m);
    assert_int_equal(gp_nvml_memory(&n, &gpu_h, &m, &call), GP_NVML_SUCCESS);
    assert_int_equal(m.used, 400);
    assert_int_equal(m.reserved, 0);
    assert_int_equal(m.have_reserved, 0);
}

/* Failures: NVML's code, the call that gave it, nothing else known. */
static void memory_failing(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    gp_nvml_mem m, zero;
    memset(&zero, 0, sizeof zero);
    const char *call = NULL;
    sc.v2 = (gp_nvml_memory_v2){0, 1000, 40, 700, 260};
    sc.v1 = (gp_nvml_memory_v1){1000, 600, 400};
    sc.v2_rc = FAIL;
    sc.v1_rc = FAIL + 1;
    fill(&m);
    assert_int_equal(gp_nvml_memory(&n, &gpu_h, &m, &call), FAIL + 1);
    assert_string_equal(call, "nvmlDeviceGetMemoryInfo");
    assert_memory_equal(&m, &zero, sizeof m);

    n.f.DeviceGetMemoryInfo = NULL; /* version 2 only, failing */
    fill(&m);
    assert_int_equal(gp_nvml_memory(&n, &gpu_h, &m, &call), FAIL);
    assert_string_equal(call, "nvmlDeviceGetMemoryInfo_v2");
    assert_memory_equal(&m, &zero, sizeof m);

    n.f.DeviceGetMemoryInfo_v2 = NULL; /* neither */
    fill(&m);
    call = NULL;
    assert_int_equal(gp_nvml_memory(&n, &gpu_h, &m, &call), GP_NVML_MISSING);
    assert_non_null(call);
    assert_string_equal(call, "nvmlDeviceGetMemoryInfo");
    assert_memory_equal(&m, &zero, sizeof m);
}

/* ---- the integer queries ------------------------------------------------- */

static const struct {
    gp_nvml_query q;
    const char *call;
    size_t slot; /* offsetof(gp_nvml_fns, ...) */
} queries[] = {
    {GP_NVML_GPU_UTILIZATION, "nvmlDeviceGetUtilizationRates",
     offsetof(gp_nvml_fns, DeviceGetUtilizationRates)},
    {GP_NVML_MEMORY_UTILIZATION, "nvmlDeviceGetUtilizationRates",
     offsetof(gp_nvml_fns, DeviceGetUtilizationRates)},
    {GP_NVML_TEMPERATURE, "nvmlDeviceGetTemperature", offsetof(gp_nvml_fns, DeviceGetTemperature)},
    {GP_NVML_POWER, "nvmlDeviceGetPowerUsage", offsetof(gp_nvml_fns, DeviceGetPowerUsage)},
    {GP_NVML_POWER_LIMIT, "nvmlDeviceGetEnforcedPowerLimit",
     offsetof(gp_nvml_fns, DeviceGetEnforcedPowerLimit)},
    {GP_NVML_PROCESSES, "nvmlDeviceGetComputeRunningProcesses_v3",
     offsetof(gp_nvml_fns, DeviceGetComputeRunningProcesses)},
    {GP_NVML_PCIE_GEN, "nvmlDeviceGetCurrPcieLinkGeneration",
     offsetof(gp_nvml_fns, DeviceGetCurrPcieLinkGeneration)},
    {GP_NVML_PCIE_WIDTH, "nvmlDeviceGetCurrPcieLinkWidth",
     offsetof(gp_nvml_fns, DeviceGetCurrPcieLinkWidth)},
    {GP_NVML_PCIE_MAX_GEN, "nvmlDeviceGetMaxPcieLinkGeneration",
     offsetof(gp_nvml_fns, DeviceGetMaxPcieLinkGeneration)},
    {GP_NVML_PCIE_MAX_WIDTH, "nvmlDeviceGetMaxPcieLinkWidth",
     offsetof(gp_nvml_fns, DeviceGetMaxPcieLinkWidth)},
};

static void query_values(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
        gp_nvml n = nvml();
        int64_t v = -7;
        const char *call = NULL;
        sc.q_value = 40;
        sc.temp_sensor_seen = -1;
        /* The processes query answers a count with INSUFFICIENT_SIZE. */
        sc.q_rc = queries[i].q == GP_NVML_PROCESSES ? GP_NVML_ERROR_INSUFFICIENT_SIZE
                                                    : GP_NVML_SUCCESS;
        assert_int_equal(gp_nvml_query_int(&n, &gpu_h, queries[i].q, &v, &call),
                         GP_NVML_SUCCESS);
        assert_string_equal(call, queries[i].call);
        /* The memory utilisation is the second field of the record. */
        assert_int_equal(v, queries[i].q == GP_NVML_MEMORY_UTILIZATION ? 41 : 40);
        if (queries[i].q == GP_NVML_TEMPERATURE)
            assert_int_equal(sc.temp_sensor_seen, 0); /* NVML_TEMPERATURE_GPU */
    }
}

/* A failed query leaves *v alone, whatever NVML wrote; a missing function
 * is GP_NVML_MISSING with the call named. */
static void query_failing(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
        gp_nvml n = nvml();
        int64_t v = -7;
        const char *call = NULL;
        sc.q_value = 40;
        sc.q_rc = FAIL;
        assert_int_equal(gp_nvml_query_int(&n, &gpu_h, queries[i].q, &v, &call), FAIL);
        assert_string_equal(call, queries[i].call);
        assert_int_equal(v, -7);

        void *none = NULL;
        memcpy((char *)&n.f + queries[i].slot, &none, sizeof none);
        call = NULL;
        assert_int_equal(gp_nvml_query_int(&n, &gpu_h, queries[i].q, &v, &call),
                         GP_NVML_MISSING);
        assert_string_equal(call, queries[i].call);
        assert_int_equal(v, -7);
    }
}

/* The processes: NVML_SUCCESS with an empty array means none, whatever
 * count was written. */
static void query_processes(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    int64_t v = -7;
    const char *call = NULL;
    sc.q_value = 5;
    sc.q_rc = GP_NVML_SUCCESS;
    assert_int_equal(gp_nvml_query_int(&n, &gpu_h, GP_NVML_PROCESSES, &v, &call),
                     GP_NVML_SUCCESS);
    assert_int_equal(v, 0);
    sc.q_rc = GP_NVML_ERROR_INSUFFICIENT_SIZE;
    assert_int_equal(gp_nvml_query_int(&n, &gpu_h, GP_NVML_PROCESSES, &v, &call),
                     GP_NVML_SUCCESS);
    assert_int_equal(v, 5);
}

/* A query the library does not know: refused, named "?". */
static void query_unknown(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    int64_t v = -7;
    const char *call = NULL;
    assert_int_equal(gp_nvml_query_int(&n, &gpu_h, (gp_nvml_query)99, &v, &call),
                     GP_NVML_MISSING);
    assert_non_null(call);
    assert_string_equal(call, "?");
    assert_int_equal(v, -7);
}

/* ---- what the GPUs' snapshot reads ---------------------------------------- */

/* The process lists, scripted: `total` processes (pid 100 + i, i GiB,
 * instance ids i and i + 10); each call may see `grow` more than the
 * last one did (processes starting between the count and the list). */
static struct procs_script {
    unsigned total, grow, calls, v1_calls;
    int rc; /* forced result, 0: the protocol's */
    unsigned long long used0;
} ps;

static int s_proc_list(void *h, unsigned *count, gp_nvml_process *out)
{
    (void)h;
    unsigned room = *count, have = ps.total + ps.grow * ps.calls;
    ps.calls++;
    for (unsigned i = 0; out && i < room && i < have; i++) {
        out[i].pid = 100 + i;
        out[i].used = i == 0 && ps.used0 ? ps.used0 : (unsigned long long)i << 30;
        out[i].gi = i;
        out[i].ci = i + 10;
    }
    *count = have;
    if (ps.rc)
        return ps.rc;
    return have > room ? GP_NVML_ERROR_INSUFFICIENT_SIZE : GP_NVML_SUCCESS;
}

static int s_proc_list_v1(void *h, unsigned *count, gp_nvml_process_v1 *out)
{
    (void)h;
    unsigned room = *count;
    ps.v1_calls++;
    for (unsigned i = 0; out && i < room && i < ps.total; i++) {
        out[i].pid = 200 + i;
        out[i].used = 7;
    }
    *count = ps.total;
    return ps.total > room ? GP_NVML_ERROR_INSUFFICIENT_SIZE : GP_NVML_SUCCESS;
}

static gp_nvml procs_nvml(void)
{
    gp_nvml n = nvml();
    memset(&ps, 0, sizeof ps);
    n.f.ComputeProcesses = s_proc_list;
    n.f.GraphicsProcesses = s_proc_list;
    n.f.ComputeProcessesV1 = s_proc_list_v1;
    n.f.GraphicsProcessesV1 = s_proc_list_v1;
    return n;
}

/* The count, then the list; none is an empty list; the instance ids and
 * "not available" memory as NVML gives them. */
static void processes_listed(void **state)
{
    (void)state;
    gp_nvml n = procs_nvml();
    gp_nvml_process *list = (gp_nvml_process *)&n;
    unsigned count = 99;
    const char *call = NULL;
    assert_int_equal(gp_nvml_processes(&n, &gpu_h, 0, &list, &count, &call), GP_NVML_SUCCESS);
    assert_string_equal(call, "nvmlDeviceGetComputeRunningProcesses_v3");
    assert_null(list);
    assert_int_equal(count, 0);
    assert_int_equal(ps.calls, 1);

    ps.total = 3;
    ps.used0 = GP_NVML_NOT_AVAILABLE;
    assert_int_equal(gp_nvml_processes(&n, &gpu_h, 1, &list, &count, &call), GP_NVML_SUCCESS);
    assert_string_equal(call, "nvmlDeviceGetGraphicsRunningProcesses_v3");
    assert_int_equal(count, 3);
    assert_int_equal(ps.calls, 3); /* the count, the list */
    assert_int_equal(list[0].pid, 100);
    assert_true(list[0].used == GP_NVML_NOT_AVAILABLE);
    assert_int_equal(list[2].used, UINT64_C(2) << 30);
    assert_int_equal(list[2].gi, 2);
    assert_int_equal(list[2].ci, 12);
    free(list);
}

/* Processes starting between the calls: asked again with room for the
 * new count; a list that never stops growing ends after a few tries. */
static void processes_growing(void **state)
{
    (void)state;
    gp_nvml n = procs_nvml();
    gp_nvml_process *list = NULL;
    unsigned count = 0;
    const char *call = NULL;
    ps.total = 2;
    ps.grow = 3; /* within the room of four added */
    assert_int_equal(gp_nvml_processes(&n, &gpu_h, 0, &list, &count, &call), GP_NVML_SUCCESS);
    /* the count says 2; the list, with room for 6, finds 5 */
    assert_int_equal(count, 5);
    assert_int_equal(ps.calls, 2);
    assert_int_equal(list[4].pid, 104);
    free(list);

    memset(&ps, 0, sizeof ps);
    ps.total = 2;
    ps.grow = 5; /* past the room each time: 2, then 7 > 6, 12 > 11, 17 > 16 */
    list = (gp_nvml_process *)&n;
    assert_int_equal(gp_nvml_processes(&n, &gpu_h, 0, &list, &count, &call),
                     GP_NVML_ERROR_INSUFFICIENT_SIZE);
    assert_null(list);
    assert_int_equal(count, 0);
    assert_int_equal(ps.calls, 4);

    /* A count beyond belief is not allocated for. */
    memset(&ps, 0, sizeof ps);
    ps.total = 5000;
    assert_int_equal(gp_nvml_processes(&n, &gpu_h, 0, &list, &count, &call),
                     GP_NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(ps.calls, 1);
    assert_null(list);

    /* NVML saying success with more than there was room for: asked again. */
    memset(&ps, 0, sizeof ps);
    ps.total = 2;
    ps.rc = GP_NVML_SUCCESS;
    assert_int_equal(gp_nvml_processes(&n, &gpu_h, 0, &list, &count, &call), GP_NVML_SUCCESS);
    assert_int_equal(count, 2);
    assert_int_equal(ps.calls, 2);
    free(list);
}

/* A failing list, the first version only, no list at all. */
static void processes_failing_and_old(void **state)
{
    (void)state;
    gp_nvml n = procs_nvml();
    gp_nvml_process *list = (gp_nvml_process *)&n;
    unsigned count = 9;
    const char *call = NULL;
    ps.total = 1;
    ps.rc = FAIL;
    assert_int_equal(gp_nvml_processes(&n, &gpu_h, 0, &list, &count, &call), FAIL);
    assert_null(list);
    assert_int_equal(count, 0);

    ps.rc = 0;
    ps.total = 2;
    ps.calls = 0;
    n.f.ComputeProcesses = NULL;
    assert_int_equal(gp_nvml_processes(&n, &gpu_h, 0, &list, &count, &call), GP_NVML_SUCCESS);
    assert_int_equal(ps.calls, 0);
    assert_int_equal(ps.v1_calls, 2);
    assert_int_equal(count, 2);
    assert_int_equal(list[1].pid, 201);
    assert_int_equal(list[1].used, 7);
    assert_int_equal(list[1].gi, GP_NVML_NO_ID); /* the first version has none */
    assert_int_equal(list[1].ci, GP_NVML_NO_ID);
    free(list);

    n.f.ComputeProcessesV1 = NULL;
    assert_int_equal(gp_nvml_processes(&n, &gpu_h, 0, &list, &count, &call), GP_NVML_MISSING);
    assert_string_equal(call, "nvmlDeviceGetComputeRunningProcesses_v3");
    char buf[128];
    gp_nvml_error(&n, "nvmlDeviceGetGraphicsRunningProcesses_v3", GP_NVML_NO_MEMORY, buf, sizeof buf);
    assert_string_equal(buf, "out of host memory for what nvmlDeviceGetGraphicsRunningProcesses_v3 gave");
}

/* The texts: written only on success, terminated whatever NVML wrote. */
static int s_text(char *buf, unsigned len)
{
    if (sc.fill)
        memset(buf, 'T', sc.fill < len ? sc.fill : len);
    else
        snprintf(buf, len, "%s", sc.uuid);
    return sc.uuid_rc;
}
static int s_driver(char *buf, unsigned len) { return s_text(buf, len); }
static int s_name(void *h, char *buf, unsigned len)
{
    (void)h;
    return s_text(buf, len);
}

static void texts(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    n.f.SystemGetDriverVersion = s_driver;
    n.f.DeviceGetName = s_name;
    char buf[32];
    const char *call = NULL;
    sc.uuid = "580.65.06";
    assert_int_equal(gp_nvml_driver_version(&n, buf, sizeof buf, &call), GP_NVML_SUCCESS);
    assert_string_equal(buf, "580.65.06");
    assert_string_equal(call, "nvmlSystemGetDriverVersion");
    sc.uuid = "NVIDIA H200";
    assert_int_equal(gp_nvml_name(&n, &gpu_h, buf, sizeof buf, &call), GP_NVML_SUCCESS);
    assert_string_equal(buf, "NVIDIA H200");
    assert_int_equal(gp_nvml_uuid(&n, &gpu_h, buf, sizeof buf, &call), GP_NVML_SUCCESS);
    assert_string_equal(call, "nvmlDeviceGetUUID");
    /* Unterminated: cut at the buffer, terminated. */
    sc.fill = 500;
    assert_int_equal(gp_nvml_name(&n, &gpu_h, buf, sizeof buf, &call), GP_NVML_SUCCESS);
    assert_int_equal(strlen(buf), sizeof buf - 1);
    assert_int_equal(buf[0], 'T');
    /* Failing: nothing written. */
    sc.fill = 0;
    sc.uuid_rc = FAIL;
    strcpy(buf, "kept");
    assert_int_equal(gp_nvml_driver_version(&n, buf, sizeof buf, &call), FAIL);
    assert_int_equal(gp_nvml_name(&n, &gpu_h, buf, sizeof buf, &call), FAIL);
    assert_string_equal(call, "nvmlDeviceGetName");
    assert_string_equal(buf, "kept");
    n.f.SystemGetDriverVersion = NULL;
    n.f.DeviceGetName = NULL;
    assert_int_equal(gp_nvml_driver_version(&n, buf, sizeof buf, &call), GP_NVML_MISSING);
    assert_int_equal(gp_nvml_name(&n, &gpu_h, buf, sizeof buf, &call), GP_NVML_MISSING);
    assert_string_equal(buf, "kept");
}

/* The PCI bus id: NVML's eight-digit domain read as a number; a busId
 * that does not parse falls back to the numeric fields. */
static gp_nvml_pci pci_answer;
static int pci_rc;
static int s_pci(void *h, gp_nvml_pci *p)
{
    (void)h;
    *p = pci_answer;
    return pci_rc;
}

static void pci_bus_id(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    n.f.DeviceGetPciInfo = s_pci;
    char buf[32];
    const char *call = NULL;
    memset(&pci_answer, 0, sizeof pci_answer);
    pci_rc = GP_NVML_SUCCESS;
    strcpy(pci_answer.bus_id, "00000001:1B:02.3");
    assert_int_equal(gp_nvml_pci_bus_id(&n, &gpu_h, buf, sizeof buf, &call), GP_NVML_SUCCESS);
    assert_string_equal(buf, "0001:1B:02.3");
    assert_string_equal(call, "nvmlDeviceGetPciInfo_v3");
    strcpy(pci_answer.bus_id, "0000:1b:00.0"); /* four digits, lower case */
    assert_int_equal(gp_nvml_pci_bus_id(&n, &gpu_h, buf, sizeof buf, &call), GP_NVML_SUCCESS);
    assert_string_equal(buf, "0000:1B:00.0");
    memset(pci_answer.bus_id, 'z', sizeof pci_answer.bus_id); /* unterminated nonsense */
    pci_answer.domain = 2;
    pci_answer.bus = 0x3c;
    pci_answer.device = 4;
    assert_int_equal(gp_nvml_pci_bus_id(&n, &gpu_h, buf, sizeof buf, &call), GP_NVML_SUCCESS);
    assert_string_equal(buf, "0002:3C:04.0");
    strcpy(pci_answer.bus_id, "0000:1b:00.9"); /* no function 9 */
    assert_int_equal(gp_nvml_pci_bus_id(&n, &gpu_h, buf, sizeof buf, &call), GP_NVML_SUCCESS);
    assert_string_equal(buf, "0002:3C:04.0");
    pci_rc = FAIL;
    strcpy(buf, "kept");
    assert_int_equal(gp_nvml_pci_bus_id(&n, &gpu_h, buf, sizeof buf, &call), FAIL);
    assert_string_equal(buf, "kept");
    n.f.DeviceGetPciInfo = NULL;
    assert_int_equal(gp_nvml_pci_bus_id(&n, &gpu_h, buf, sizeof buf, &call), GP_NVML_MISSING);
}

/* Compute capability, MIG ids and attributes: written only on success. */
static int id_rc;
static int s_cc(void *h, int *a, int *b)
{
    (void)h;
    *a = 9;
    *b = 1;
    return id_rc;
}
static int s_gi(void *h, unsigned *v)
{
    (void)h;
    *v = 13;
    return id_rc;
}
static int s_ci(void *h, unsigned *v)
{
    (void)h;
    *v = 2;
    return id_rc;
}
static int s_attr(void *h, gp_nvml_attributes *a)
{
    (void)h;
    memset(a, 0, sizeof *a);
    a->gpu_instance_slices = 3;
    a->multiprocessors = 60;
    return id_rc;
}

static void mig_ids(void **state)
{
    (void)state;
    gp_nvml n = nvml();
    n.f.DeviceGetCudaComputeCapability = s_cc;
    n.f.DeviceGetGpuInstanceId = s_gi;
    n.f.DeviceGetComputeInstanceId = s_ci;
    n.f.DeviceGetAttributes = s_attr;
    const char *call = NULL;
    int major = -1, minor = -1;
    unsigned gi = 99, ci = 99;
    gp_nvml_attributes a;
    memset(&a, 0xff, sizeof a);
    id_rc = FAIL;
    assert_int_equal(gp_nvml_cc(&n, &gpu_h, &major, &minor, &call), FAIL);
    assert_string_equal(call, "nvmlDeviceGetCudaComputeCapability");
    assert_int_equal(gp_nvml_mig_id(&n, &mig_h, 0, &gi, &call), FAIL);
    assert_string_equal(call, "nvmlDeviceGetGpuInstanceId");
    assert_int_equal(gp_nvml_mig_id(&n, &mig_h, 1, &ci, &call), FAIL);
    assert_string_equal(call, "nvmlDeviceGetComputeInstanceId");
    assert_int_equal(gp_nvml_mig_attributes(&n, &mig_h, &a, &call), FAIL);
    assert_string_equal(call, "nvmlDeviceGetAttributes_v2");
    assert_int_equal(major, -1);
    assert_int_equal(gi, 99);
    assert_int_equal(ci, 99);
    assert_int_equal(a.gpu_instance_slices, 0xffffffffu);
    id_rc = GP_NVML_SUCCESS;
    assert_int_equal(gp_nvml_cc(&n, &gpu_h, &major, &minor, &call), GP_NVML_SUCCESS);
    assert_int_equal(major, 9);
    assert_int_equal(minor, 1);
    assert_int_equal(gp_nvml_mig_id(&n, &mig_h, 0, &gi, &call), GP_NVML_SUCCESS);
    assert_int_equal(gp_nvml_mig_id(&n, &mig_h, 1, &ci, &call), GP_NVML_SUCCESS);
    assert_int_equal(gi, 13);
    assert_int_equal(ci, 2);
    assert_int_equal(gp_nvml_mig_attributes(&n, &mig_h, &a, &call), GP_NVML_SUCCESS);
    assert_int_equal(a.gpu_instance_slices, 3);
    assert_int_equal(a.multiprocessors, 60);
    n.f.DeviceGetCudaComputeCapability = NULL;
    n.f.DeviceGetGpuInstanceId = NULL;
    n.f.DeviceGetAttributes = NULL;
    assert_int_equal(gp_nvml_cc(&n, &gpu_h, &major, &minor, &call), GP_NVML_MISSING);
    assert_int_equal(gp_nvml_mig_id(&n, &mig_h, 0, &gi, &call), GP_NVML_MISSING);
    assert_int_equal(gp_nvml_mig_attributes(&n, &mig_h, &a, &call), GP_NVML_MISSING);
}

/* ---- the loader ----------------------------------------------------------- */

static char nvml_path[GP_PATH_LEN]; /* where libnvidia-ml.so.1 comes from */
static unsigned nvml_opens;

static void *redirect_dlopen(const char *file, int mode)
{
    if (strcmp(file, "libnvidia-ml.so.1") == 0) {
        nvml_opens++;
        return dlopen(nvml_path, mode);
    }
    return dlopen(file, mode);
}

static void use_fake(const char *dir)
{
    snprintf(nvml_path, sizeof nvml_path, "%s/%s/libnvidia-ml.so.1", GP_FAKELIB_DIR, dir);
}

static int loader_setup(void **state)
{
    (void)state;
    unsetenv("FAKE_NVML_INIT_RESULT");
    nvml_opens = 0;
    use_fake("nvml");
    gp_test_dlopen = redirect_dlopen;
    return 0;
}

static int loader_teardown(void **state)
{
    (void)state;
    gp_test_dlopen = NULL;
    unsetenv("FAKE_NVML_INIT_RESULT");
    return 0;
}

static int mapped(void)
{
    void *h = dlopen(nvml_path, RTLD_NOW | RTLD_NOLOAD);
    if (h)
        dlclose(h);
    return h != NULL;
}

static int table_empty(const gp_nvml *n)
{
    static const gp_nvml_fns none;
    return memcmp(&n->f, &none, sizeof none) == 0;
}

/* A function pointer's address, for comparing with dlsym(). */
static void *fn_addr(const void *slot)
{
    void *p;
    memcpy(&p, slot, sizeof p);
    return p;
}

static unsigned shutdowns;
static int count_shutdown(void)
{
    shutdowns++;
    return GP_NVML_SUCCESS;
}

static void load_and_unload(void **state)
{
    (void)state;
    gp_nvml n;
    memset(&n, 0, sizeof n);
    assert_int_equal(gp_nvml_load(&n, 0), 1);
    assert_int_equal(n.ok, 1);
    assert_non_null(n.lib);
    assert_true(mapped());
    assert_ptr_equal(fn_addr(&n.f.Init), dlsym(n.lib, "nvmlInit_v2"));
    assert_ptr_equal(fn_addr(&n.f.DeviceGetComputeRunningProcesses),
                     dlsym(n.lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
    assert_ptr_equal(fn_addr(&n.f.DeviceGetMaxPcieLinkWidth),
                     dlsym(n.lib, "nvmlDeviceGetMaxPcieLinkWidth"));
    assert_ptr_equal(fn_addr(&n.f.ComputeProcesses),
                     dlsym(n.lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
    assert_ptr_equal(fn_addr(&n.f.GraphicsProcesses),
                     dlsym(n.lib, "nvmlDeviceGetGraphicsRunningProcesses_v3"));
    assert_ptr_equal(fn_addr(&n.f.GraphicsProcessesV1),
                     dlsym(n.lib, "nvmlDeviceGetGraphicsRunningProcesses"));
    /* Loaded once. */
    assert_int_equal(gp_nvml_load(&n, 0), 1);
    assert_int_equal(nvml_opens, 1);

    /* Unloading shuts NVML down once and closes it; nothing of it is
     * left to call, and it is not loaded again. */
    shutdowns = 0;
    n.f.Shutdown = count_shutdown;
    gp_nvml_unload(&n);
    assert_int_equal(shutdowns, 1);
    assert_false(mapped());
    assert_null(n.lib);
    assert_int_equal(n.ok, 0);
    assert_true(table_empty(&n));
    gp_nvml_unload(&n);
    assert_int_equal(shutdowns, 1);
    assert_int_equal(gp_nvml_load(&n, 0), 0);
    assert_int_equal(nvml_opens, 1);

    /* Never loaded: nothing to do. */
    memset(&n, 0, sizeof n);
    n.f.Shutdown = count_shutdown;
    gp_nvml_unload(&n);
    assert_int_equal(shutdowns, 1);
}

static void load_disabled(void **state)
{
    (void)state;
    gp_nvml n;
    memset(&n, 0, sizeof n);
    assert_int_equal(gp_nvml_load(&n, 1), 0);
    assert_string_equal(n.why, "GPUPROBE_NVML turns NVML off");
    assert_int_equal(nvml_opens, 0);
    assert_int_equal(gp_nvml_load(&n, 0), 0); /* decided */
    assert_int_equal(nvml_opens, 0);
}

static void load_missing(void **state)
{
    (void)state;
    gp_nvml n;
    memset(&n, 0, sizeof n);
    use_fake("no-such-directory");
    assert_int_equal(gp_nvml_load(&n, 0), 0);
    assert_int_equal(nvml_opens, 1);
    assert_non_null(strstr(n.why, "libnvidia-ml.so.1 cannot be loaded ("));
    /* The system loader's reason, with the file it could not open. */
    assert_non_null(strstr(n.why, "no-such-directory/libnvidia-ml.so.1"));
    assert_null(n.lib);
    assert_int_equal(n.ok, 0);
    assert_true(table_empty(&n));
}

/* A library that cannot be initialised is closed, its functions dropped. */
static void assert_refused(const char *dir, const char *why)
{
    gp_nvml n;
    memset(&n, 0, sizeof n);
    use_fake(dir);
    assert_int_equal(gp_nvml_load(&n, 0), 0);
    assert_string_equal(n.why, why);
    assert_null(n.lib);
    assert_int_equal(n.ok, 0);
    assert_true(table_empty(&n));
    assert_false(mapped());
    assert_int_equal(gp_nvml_load(&n, 0), 0); /* decided */
}

static void load_lacking(void **state)
{
    (void)state;
    assert_refused("nvml-no-nvmlInit_v2", "libnvidia-ml.so.1 lacks nvmlInit_v2");
    assert_refused("nvml-no-nvmlShutdown", "libnvidia-ml.so.1 lacks nvmlShutdown");
}

static void load_init_failing(void **state)
{
    (void)state;
    assert_int_equal(setenv("FAKE_NVML_INIT_RESULT", "9", 1), 0); /* DRIVER_NOT_LOADED */
    assert_refused("nvml", "nvmlInit_v2 failed: fake NVML error 9 (NVML error 9)");
}

/* The processes query: the newest version the library has. */
static void load_older_versions(void **state)
{
    (void)state;
    static const struct {
        const char *dir, *symbol;
    } cases[] = {
        {"nvml-procs-v2", "nvmlDeviceGetComputeRunningProcesses_v2"},
        {"nvml-procs-v1", "nvmlDeviceGetComputeRunningProcesses"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gp_nvml n;
        memset(&n, 0, sizeof n);
        use_fake(cases[i].dir);
        assert_int_equal(gp_nvml_load(&n, 0), 1);
        assert_non_null(dlsym(n.lib, cases[i].symbol));
        assert_ptr_equal(fn_addr(&n.f.DeviceGetComputeRunningProcesses),
                         dlsym(n.lib, cases[i].symbol));
        /* The lists: _v2 fills the newest layout, the first version its
         * own (converted). */
        assert_ptr_equal(fn_addr(&n.f.ComputeProcesses),
                         i == 0 ? dlsym(n.lib, cases[i].symbol) : NULL);
        assert_ptr_equal(fn_addr(&n.f.ComputeProcessesV1),
                         dlsym(n.lib, "nvmlDeviceGetComputeRunningProcesses"));
        gp_nvml_unload(&n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(error_message),
        cmocka_unit_test(error_message_cut),
        cmocka_unit_test(find_gpu_by_uuid),
        cmocka_unit_test(find_gpu_facts_failing),
        cmocka_unit_test(find_gpu_index_bound),
        cmocka_unit_test(find_gpu_uuid_unterminated),
        cmocka_unit_test(find_gpu_mig_count),
        cmocka_unit_test(find_mig_instance),
        cmocka_unit_test(find_mig_index),
        cmocka_unit_test(find_mig_without_parent),
        cmocka_unit_test(find_not_found),
        cmocka_unit_test(find_by_pci),
        cmocka_unit_test(find_by_pci_mig_gpu),
        cmocka_unit_test(memory_v2),
        cmocka_unit_test(memory_v1),
        cmocka_unit_test(memory_failing),
        cmocka_unit_test(query_values),
        cmocka_unit_test(query_failing),
        cmocka_unit_test(query_processes),
        cmocka_unit_test(query_unknown),
        cmocka_unit_test(processes_listed),
        cmocka_unit_test(processes_growing),
        cmocka_unit_test(processes_failing_and_old),
        cmocka_unit_test(texts),
        cmocka_unit_test(pci_bus_id),
        cmocka_unit_test(mig_ids),
        cmocka_unit_test_setup_teardown(load_and_unload, loader_setup, loader_teardown),
        cmocka_unit_test_setup_teardown(load_disabled, loader_setup, loader_teardown),
        cmocka_unit_test_setup_teardown(load_missing, loader_setup, loader_teardown),
        cmocka_unit_test_setup_teardown(load_lacking, loader_setup, loader_teardown),
        cmocka_unit_test_setup_teardown(load_init_failing, loader_setup, loader_teardown),
        cmocka_unit_test_setup_teardown(load_older_versions, loader_setup, loader_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
