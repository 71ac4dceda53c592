/*
 * model.c - where a model's config.json is (model.h: a path, a directory,
 * a model id in the local Hugging Face hub cache, a shipped config), the
 * shipped configs listed, and the workload options the commands share.
 * Nothing here opens a network connection: a model that is not on this
 * machine is not found, and the message says where it was looked for.
 *
 * SPDX-License-Identifier: BSD-2-Clause
 */
#include "model.h"

#include "json.h"
#include "report.h"
#include "text.h"
#include "values.h"

#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef GPUPROBE_MODELS_DATADIR
#define GPUPROBE_MODELS_DATADIR "/usr/local/share/gpuprobe/models"
#endif

/* The longest Hugging Face model id, as the hub allows it. */
#define HUB_ID_MAX 96

const char *cli_model_source_name(cli_model_source source)
{
    switch (source) {
    case CLI_MODEL_FILE: return "file";
    case CLI_MODEL_DIRECTORY: return "directory";
    case CLI_MODEL_HUB: return "hub_cache";
    case CLI_MODEL_SHIPPED: return "shipped";
    }
    return "unknown";
}

/* An environment variable, NULL when unset or empty. */
static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] ? v : NULL;
}

/* snprintf that says whether it all fit: 0, or -1 when cut. */
static int fmt(char *buf, size_t size, const char *f, ...) CLI_PRINTF(3, 4);
static int fmt(char *buf, size_t size, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(buf, size, f, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < size ? 0 : -1;
}

/* A regular file (links followed) that can be opened for reading. */
static int readable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

/* Appends to the account of where the model was looked for. */
typedef struct looked {
    char *buf;
    size_t size, len;
} looked;

static void note(looked *l, const char *f, ...) CLI_PRINTF(2, 3);
static void note(looked *l, const char *f, ...)
{
    if (l->len + 1 >= l->size)
        return;
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(l->buf + l->len, l->size - l->len, f, ap);
    va_end(ap);
    if (n > 0)
        l->len = l->len + (size_t)n < l->size ? l->len + (size_t)n : l->size - 1;
}

/* ---- 1. a path ------------------------------------------------------------- */

/* 1 found, 0 not a path here, -1 a directory without a config (noted). */
static int find_path(const char *m, cli_model_found *out, looked *l)
{
    struct stat st;
    if (stat(m, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode)) {
        if (fmt(out->path, sizeof out->path, "%s/config.json", m) == 0 &&
            readable_file(out->path)) {
            out->source = CLI_MODEL_DIRECTORY;
            return 1;
        }
        note(l, "the directory %s holds no readable config.json", m);
        return -1;
    }
    if (fmt(out->path, sizeof out->path, "%s", m) != 0)
        return 0;
    out->source = CLI_MODEL_FILE;
    return 1;
}

/* ---- 2. the Hugging Face hub cache ---------------------------------------- */

/* NAME or ORG/NAME as the hub spells model ids. */
static int is_hub_id(const char *m)
{
    size_t n = strlen(m);
    if (n == 0 || n > HUB_ID_MAX || strstr(m, "--") || strstr(m, ".."))
        return 0;
    int parts = 1, start = 1;
    for (const char *p = m; *p; p++) {
        char c = *p;
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (c == '/') {
            if (start || ++parts > 2)
                return 0;
            start = 1;
            continue;
        }
        if (!alnum && !(c == '.' || c == '_' || c == '-'))
            return 0;
        if (start && !alnum)
            return 0;
        start = 0;
    }
    return !start;
}

int cli_hub_cache(char *buf, size_t size, const char **from)
{
    const char *v, *src;
    int rc;
    if ((v = env("HF_HUB_CACHE"))) {
        src = "HF_HUB_CACHE";
        rc = fmt(buf, size, "%s", v);
    } else if ((v = env("HF_HOME"))) {
        src = "HF_HOME";
        rc = fmt(buf, size, "%s/hub", v);
    } else {
        src = "HOME";
        if (!(v = env("HOME"))) {
            struct passwd *pw = getpwuid(getuid());
            v = pw && pw->pw_dir && pw->pw_dir[0] ? pw->pw_dir : NULL;
            src = "passwd";
        }
        rc = v ? fmt(buf, size, "%s/.cache/huggingface/hub", v) : -1;
    }
    if (from)
        *from = src;
    return rc;
}

/* The snapshot refs/main names, into ref ("" when none). */
static void main_ref(const char *repo, char *ref, size_t size)
{
    char path[CLI_MODEL_PATH_MAX];
    ref[0] = '\0';
    if (fmt(path, sizeof path, "%s/refs/main", repo) != 0)
        return;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (!fgets(ref, (int)size, f))
        ref[0] = '\0';
    fclose(f);
    ref[strcspn(ref, "\r\n \t")] = '\0';
    if (strchr(ref, '/') || strcmp(ref, ".") == 0 || strcmp(ref, "..") == 0)
        ref[0] = '\0';
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The snapshot directories' names, sorted (malloc'd; free each and the
 * array). Returns how many, -1 when there is no snapshots directory. */
static long snapshot_names(const char *repo, char ***out)
{
    char path[CLI_MODEL_PATH_MAX];
    *out = NULL;
    if (fmt(path, sizeof path, "%s/snapshots", repo) != 0)
        return -1;
    DIR *d = opendir(path);
    if (!d)
        return -1;
    long n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            char **grown = realloc(*out, (size_t)cap * sizeof *grown);
            if (!grown)
                break;
            *out = grown;
        }
        if (((*out)[n] = strdup(e->d_name)))
            n++;
    }
    closedir(d);
    if (n > 1)
        qsort(*out, (size_t)n, sizeof **out, by_name);
    return n;
}

/* The config.json of snapshot rev in repo, if it is there. */
static int snapshot_config(const char *repo, const char *rev, cli_model_found *out)
{
    return fmt(out->path, sizeof out->path, "%s/snapshots/%s/config.json", repo, rev) == 0 &&
           readable_file(out->path);
}

/* The repository folder of id: 1 found, 0 not (noted). */
static int find_hub(const char *m, cli_model_found *out, looked *l)
{
    char hub[CLI_MODEL_PATH_MAX], repo[CLI_MODEL_PATH_MAX], folder[HUB_ID_MAX + 16];
    const char *from = "";
    if (cli_hub_cache(hub, sizeof hub, &from) != 0) {
        note(l, "; no Hugging Face hub cache (no home directory)");
        return 0;
    }
    /* models--ORG--NAME (is_hub_id() bounds the id: it fits) */
    const char *slash = strchr(m, '/');
    if (slash)
        fmt(folder, sizeof folder, "models--%.*s--%s", (int)(slash - m), m, slash + 1);
    else
        fmt(folder, sizeof folder, "models--%s", m);
    if (fmt(repo, sizeof repo, "%s/%s", hub, folder) != 0) {
        note(l, "; the Hugging Face hub cache path is too long");
        return 0;
    }
    char ref[128];
    main_ref(repo, ref, sizeof ref);
    if (ref[0] && snapshot_config(repo, ref, out)) {
        out->source = CLI_MODEL_HUB;
        return 1;
    }
    char **names = NULL;
    long n = snapshot_names(repo, &names);
    int found = 0;
    for (long i = 0; i < n; i++) {
        if (!found && strcmp(names[i], ref) != 0 && snapshot_config(repo, names[i], out))
            found = 1;
        free(names[i]);
    }
    free(names);
    if (found) {
        out->source = CLI_MODEL_HUB;
        return 1;
    }
    if (n < 0)
        note(l, "; not in the Hugging Face hub cache (%s, from %s: no %s/snapshots)", hub, from,
             folder);
    else
        note(l, "; in the Hugging Face hub cache (%s, from %s), %s has no snapshot with a "
                "config.json (%ld snapshots%s%s)", hub, from, folder, n, ref[0] ? ", refs/main " : "",
             ref);
    return 0;
}

/* ---- 3. the shipped configs ------------------------------------------------ */

/* The directory of this program's executable, into buf. */
static int exe_dir(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n <= 0 || (size_t)n >= size - 1)
        return -1;
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return 0;
}

/* Adds dir unless it is there already (the same path, or the same
 * directory by device and inode). */
static size_t add_dir(char dirs[][CLI_MODEL_PATH_MAX], const char **from, size_t n, size_t max,
                      const char *dir, const char *src)
{
    struct stat a, b;
    int have = stat(dir, &a) == 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(dirs[i], dir) == 0 ||
            (have && stat(dirs[i], &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino))
            return n;
    if (n >= max || fmt(dirs[n], CLI_MODEL_PATH_MAX, "%s", dir) != 0)
        return n;
    if (from)
        from[n] = src;
    return n + 1;
}

size_t cli_model_dirs(char dirs[][CLI_MODEL_PATH_MAX], const char **from, size_t max)
{
    size_t n = 0;
    char exe[CLI_MODEL_PATH_MAX], dir[CLI_MODEL_PATH_MAX];
    const char *v = env("GPUPROBE_MODELS_DIR");
    if (v)
        n = add_dir(dirs, from, n, max, v, "GPUPROBE_MODELS_DIR");
    /* <bin>/../share/gpuprobe/models, written without the "..": the
     * executable's directory is a real path (/proc/self/exe). */
    char *up = exe_dir(exe, sizeof exe) == 0 ? strrchr(exe, '/') : NULL;
    if (up && (*up = '\0', fmt(dir, sizeof dir, "%s/share/gpuprobe/models", exe) == 0))
        n = add_dir(dirs, from, n, max, dir, "executable");
    return add_dir(dirs, from, n, max, GPUPROBE_MODELS_DATADIR, "datadir");
}

static int find_shipped(const char *m, cli_model_found *out, looked *l)
{
    char dirs[3][CLI_MODEL_PATH_MAX];
    const char *from[3];
    size_t n = cli_model_dirs(dirs, from, 3);
    for (size_t i = 0; i < n; i++) {
        if (fmt(out->path, sizeof out->path, "%s/%s.json", dirs[i], m) == 0 &&
            readable_file(out->path)) {
            out->source = CLI_MODEL_SHIPPED;
            return 1;
        }
    }
    note(l, "; no shipped config %s.json in", m);
    for (size_t i = 0; i < n; i++)
        note(l, "%s %s (%s)", i ? "," : "", dirs[i], from[i]);
    cli_model_entry *list = NULL;
    long k = cli_model_list(&list);
    if (k > 0) {
        note(l, "; shipped:");
        for (long i = 0; i < k; i++)
            note(l, "%s %s", i ? "," : "", list[i].name);
    }
    free(list);
    return 0;
}

int cli_model_find(const char *m, cli_model_found *out, char *err, size_t errsize)
{
    char buf[4096];
    looked l = {buf, sizeof buf, 0};
    buf[0] = '\0';
    memset(out, 0, sizeof *out);
    if (!m || !m[0]) {
        fmt(err, errsize, "no model named (an empty name)");
        return -1;
    }
    int r = find_path(m, out, &l);
    if (r > 0)
        return 0;
    if (r == 0)
        note(&l, "no file or directory %s", m);
    if (r == 0 && is_hub_id(m) && find_hub(m, out, &l))
        return 0;
    if (r == 0 && is_hub_id(m) && !strchr(m, '/') && find_shipped(m, out, &l))
        return 0;
    if (r == 0 && !is_hub_id(m))
        note(&l, "; not a Hugging Face model id or a shipped config's name");
    else if (r == 0 && strchr(m, '/'))
        note(&l, "; not a shipped config (their names have no '/')");
    fmt(err, errsize, "model %s not found: %s", m, buf);
    return -1;
}

int cli_model_open(const char *m, cli_model_found *found, cli_model_config *cfg)
{
    char err[4096 + CLI_MODEL_PATH_MAX];
    memset(cfg, 0, sizeof *cfg);
    if (cli_model_find(m, found, err, sizeof err) != 0)
        return cli_bad_input("not_found", "%s", err);
    gpuprobe_status st = cli_model_load(found->path, cfg, err, sizeof err);
    if (st == GPUPROBE_ERR_OUT_OF_MEMORY) {
        cli_err("reading %s: out of memory", found->path);
        return CLI_EXIT_FAIL;
    }
    if (st != GPUPROBE_OK)
        return cli_bad_input(gpuprobe_status_name(st), "%s", err);
    return CLI_EXIT_OK;
}

/* ---- the shipped configs, listed ----------------------------------------- */

static int entry_by_name(const void *a, const void *b)
{
    return strcmp(((const cli_model_entry *)a)->name, ((const cli_model_entry *)b)->name);
}

/* Adds dir's *.json configs that no earlier directory had; -1 out of memory. */
static long list_dir(const char *dir, cli_model_entry **list, long n, long *cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len <= 5 || len - 5 >= sizeof(*list)->name ||
            strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        int dup = 0;
        for (long i = 0; i < n && !dup; i++)
            dup = strncmp((*list)[i].name, e->d_name, len - 5) == 0 && !(*list)[i].name[len - 5];
        char path[CLI_MODEL_PATH_MAX];
        if (dup || fmt(path, sizeof path, "%s/%s", dir, e->d_name) != 0 || !readable_file(path))
            continue;
        if (n == *cap) {
            *cap = *cap ? 2 * *cap : 16;
            cli_model_entry *grown = realloc(*list, (size_t)*cap * sizeof *grown);
            if (!grown) {
                closedir(d);
                return -1;
            }
            *list = grown;
        }
        fmt((*list)[n].name, sizeof(*list)->name, "%.*s", (int)(len - 5), e->d_name);
        fmt((*list)[n].path, sizeof(*list)->path, "%s", path);
        n++;
    }
    if (d)
        closedir(d);
    return n;
}

long cli_model_list(cli_model_entry **out)
{
    char dirs[3][CLI_MODEL_PATH_MAX];
    size_t nd = cli_model_dirs(dirs, NULL, 3);
    cli_model_entry *list = NULL;
    long n = 0, cap = 0;
    for (size_t i = 0; i < nd && n >= 0; i++)
        n = list_dir(dirs[i], &list, n, &cap);
    if (n < 0) {
        free(list);
        *out = NULL;
        return -1;
    }
    if (n > 1)
        qsort(list, (size_t)n, sizeof *list, entry_by_name);
    *out = list;
    return n;
}

/* ---- the workload options --------------------------------------------------- */

/* A count option within the library's bounds of param; 0 is refused. */
static int count_option(int64_t *slot, const char *name, const char *value,
                        gpuprobe_plan_param param)
{
    int64_t lo = 0, hi = 0;
    uint64_t v = 0;
    gpuprobe_plan_param_bounds(param, &lo, &hi);
    if (cli_parse_count(value, (uint64_t)hi, &v) != 0 || v == 0)
        return cli_bad_value(value, "--%s wants a count from 1 to %lld", name, (long long)hi);
    *slot = (int64_t)v;
    return CLI_EXIT_OK;
}

int cli_workload_option(cli_workload *w, const char *name, const char *value)
{
    gpuprobe_dtype d;
    gpuprobe_workload wl;
    uint64_t bytes = 0;
    if (strcmp(name, "context") == 0)
        return count_option(&w->context, name, value, GPUPROBE_PLAN_CONTEXT);
    if (strcmp(name, "batch") == 0)
        return count_option(&w->batch, name, value, GPUPROBE_PLAN_BATCH);
    if (strcmp(name, "weights-dtype") == 0 || strcmp(name, "kv-dtype") == 0) {
        if (gpuprobe_dtype_parse(value, &d) != GPUPROBE_OK)
            return cli_bad_dtype(value, name, GP_DTYPES_ALL, "");
        *(name[0] == 'w' ? &w->weights_dtype : &w->kv_dtype) = d;
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "workload") == 0) {
        if (cli_parse_workload(value, &wl) != 0)
            return cli_bad_value(value, "--workload wants weights, inference or training");
        w->workload = wl;
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "margin") == 0) {
        if (cli_parse_size(value, INT64_MAX, &bytes) != 0)
            return cli_bad_value(value, "--margin wants a size in bytes (1GiB, 512MB, 0)");
        w->margin = (int64_t)bytes;
        return CLI_EXIT_OK;
    }
    return 1;
}

gpuprobe_dtype cli_kv_dtype(const gpuprobe_plan_options *o)
{
    int64_t kv = -1, wd = GPUPROBE_DTYPE_BF16;
    gpuprobe_plan_options_get(o, GPUPROBE_PLAN_KV_DTYPE, &kv);
    gpuprobe_plan_options_get(o, GPUPROBE_PLAN_WEIGHTS_DTYPE, &wd);
    if (kv >= 0)
        return (gpuprobe_dtype)kv;
    if (wd == GPUPROBE_DTYPE_FP64)
        return GPUPROBE_DTYPE_FP64;
    return wd == GPUPROBE_DTYPE_FP32 || wd == GPUPROBE_DTYPE_TF32 ? GPUPROBE_DTYPE_FP32
                                                                  : GPUPROBE_DTYPE_BF16;
}

int cli_workload_options(const cli_workload *w, const cli_model_config *c,
                         gpuprobe_plan_options **out)
{
    gpuprobe_plan_options *o = NULL;
    if (gpuprobe_plan_options_create(&o) != GPUPROBE_OK) {
        cli_err("out of memory");
        return CLI_EXIT_FAIL;
    }
    int64_t wd = w->weights_dtype >= 0 ? w->weights_dtype
                 : c && c->have_dtype  ? (int64_t)c->dtype
                                       : GPUPROBE_DTYPE_BF16;
    int64_t ctx = w->context > 0 ? w->context : CLI_DEFAULT_CONTEXT;
    if (w->context <= 0 && c && c->max_positions && c->max_positions < CLI_DEFAULT_CONTEXT)
        ctx = (int64_t)c->max_positions;
    gpuprobe_plan_options_set(o, GPUPROBE_PLAN_WEIGHTS_DTYPE, wd);
    gpuprobe_plan_options_set(o, GPUPROBE_PLAN_CONTEXT, ctx);
    if (w->kv_dtype >= 0)
        gpuprobe_plan_options_set(o, GPUPROBE_PLAN_KV_DTYPE, w->kv_dtype);
    if (w->batch > 0)
        gpuprobe_plan_options_set(o, GPUPROBE_PLAN_BATCH, w->batch);
    if (w->workload >= 0)
        gpuprobe_plan_options_set(o, GPUPROBE_PLAN_WORKLOAD, w->workload);
    if (w->margin >= 0)
        gpuprobe_plan_options_set(o, GPUPROBE_PLAN_MARGIN, w->margin);
    int64_t wl = GPUPROBE_WORKLOAD_INFERENCE;
    gpuprobe_plan_options_get(o, GPUPROBE_PLAN_WORKLOAD, &wl);
    if (wl == GPUPROBE_WORKLOAD_TRAINING && !cli_have_rule((gpuprobe_dtype)wd, GPUPROBE_WORKLOAD_TRAINING)) {
        gpuprobe_plan_options_destroy(o);
        return cli_usage_error("there is no training rule for %s weights (training: %s)%s",
                               gpuprobe_dtype_name((gpuprobe_dtype)wd), cli_training_dtypes(),
                               w->weights_dtype < 0 ? "; give --weights-dtype" : "");
    }
    *out = o;
    return CLI_EXIT_OK;
}

/* ---- a plan as JSON ---------------------------------------------------------- */

const char *cli_reserve_name(uint32_t source)
{
    switch (source) {
    case GPUPROBE_RESERVE_MEASURED: return "measured";
    case GPUPROBE_RESERVE_DEFAULT: return "default";
    case GPUPROBE_RESERVE_CONTEXT_HELD: return "context_held";
    default: return "none";
    }
}

struct json_object *cli_plan_json(const gpuprobe_plan *p)
{
    struct json_object *o = cli_obj();
    cli_set_u64(o, "weights_bytes", p->weights_bytes);
    cli_set_u64(o, "gradient_bytes", p->gradient_bytes);
    cli_set_u64(o, "optimizer_bytes", p->optimizer_bytes);
    cli_set_u64(o, "kv_cache_bytes", p->kv_cache_bytes);
    cli_set_u64(o, "activation_bytes", p->activation_bytes);
    cli_set_u64(o, "overhead_bytes", p->overhead_bytes);
    cli_set_str(o, "overhead_source", cli_reserve_name(p->overhead_source));
    cli_set_u64(o, "margin_bytes", p->margin_bytes);
    cli_set_u64(o, "total_bytes", p->total_bytes);
    cli_set_u64(o, "kv_bytes_per_token", p->kv_bytes_per_token);
    cli_set_bool(o, "windowed", (p->flags & GPUPROBE_PLAN_WINDOWED) != 0);
    return o;
}
