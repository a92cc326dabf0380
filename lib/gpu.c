/*
 * gpu.c: catalog of accelerator types.
 *
 * Numbers are the vendors' datasheet figures: memory in decimal bytes as
 * marketed, dense (not sparse) bf16 tensor peak, and NVLink/Infinity Fabric
 * bandwidth per GPU as marketed (both directions summed).  domain_size is the
 * usual NVLink/xGMI domain of a server or rack built from that part.
 */
#include "config.h"

#include "dtplan_private.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct dtplan_gpu catalog[] = {
	/* NVIDIA A100 datasheet: 312 TFLOPS bf16 dense, NVLink 3 600 GB/s, HGX 8. */
	{"a100-40gb", "nvidia", 40e9, 312e12, 600e9, 8},
	{"a100-80gb", "nvidia", 80e9, 312e12, 600e9, 8},
	/* H100 SXM5: 989 TFLOPS bf16 dense, NVLink 4 900 GB/s, HGX 8. */
	{"h100-sxm", "nvidia", 80e9, 989e12, 900e9, 8},
	/* H200 SXM: the H100 die with 141 GB HBM3e. */
	{"h200", "nvidia", 141e9, 989e12, 900e9, 8},
	/* DGX B200: 1,440 GB over 8 GPUs; NVLink 5 1.8 TB/s. */
	{"b200", "nvidia", 180e9, 2.25e15, 1.8e12, 8},
	/* GB200 NVL72: 13.5 TB HBM3e over 72 GPUs (about 186 GB each), one NVLink domain. */
	{"gb200", "nvidia", 186e9, 2.25e15, 1.8e12, 72},
	/* MI250X: 128 GB HBM2e, 383 TFLOPS bf16, 8 Infinity Fabric links of 100 GB/s. */
	{"mi250x", "amd", 128e9, 383e12, 800e9, 8},
	/* MI300X: 192 GB HBM3, 1307 TFLOPS bf16 dense, 7 links of 128 GB/s = 896 GB/s. */
	{"mi300x", "amd", 192e9, 1307e12, 896e9, 8},
};

/* Other spellings people use for a catalog entry. */
static const struct {
	const char *alias;
	const char *name;
} aliases[] = {
	{"h100", "h100-sxm"},
	{"h100-sxm5", "h100-sxm"},
	{"gb200-nvl72", "gb200"},
};

const struct dtplan_gpu *dtplan_gpu_catalog(size_t *n)
{
	if (n != NULL)
		*n = DTPLAN_ARRAY_SIZE(catalog);
	return catalog;
}

const struct dtplan_gpu *dtplan_gpu_find(const char *name, struct dtplan_error *err)
{
	char list[256] = "";
	size_t len = 0;

	if (name == NULL || name[0] == '\0') {
		dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "missing GPU type");
		return NULL;
	}
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(aliases); i++)
		if (dtplan__streq_nocase(name, aliases[i].alias))
			name = aliases[i].name;
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(catalog); i++)
		if (dtplan__streq_nocase(name, catalog[i].name))
			return &catalog[i];
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(catalog); i++) {
		int w = snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
				 catalog[i].name);

		if (w < 0 || (size_t)w >= sizeof(list) - len)
			break;
		len += (size_t)w;
	}
	dtplan__error(err, DTPLAN_ERR_NOT_FOUND, "", 0, "unknown GPU type '%s' (known: %s)", name,
		      list);
	return NULL;
}

/* PCI ids of catalog GPUs, for inventories whose hwloc knew no names: only
 * ids seen in the hwloc exports of ../shared/fixtures/hwloc. */
static const struct {
	const char *ids; /* "vendor:device" as node inventories print them */
	const char *name;
} pci_ids[] = {
	{"10de:2330", "h100-sxm"}, /* GH100 [H100 SXM5 80GB] */
	{"10de:2335", "h200"},     /* GH100 [H200 SXM 141GB] */
	{"1002:7408", "mi250x"},   /* Aldebaran, Instinct MI250X */
};

/* Case-insensitive: does s contain word as a whole token, not inside a
 * longer alphanumeric one ("GB200" is not "B200", "MI250X" not "MI250")? */
static bool has_word(const char *s, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = s; *p != '\0'; p++) {
		if (strncasecmp(p, word, n) != 0)
			continue;
		if ((p == s || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[n]))
			return true;
	}
	return false;
}

/* Model words, most specific first.  Variants the catalog lacks (H100 PCIe
 * and NVL: other memory and clocks) match nothing. */
static const struct {
	const char *word;
	const char *unless[2]; /* words that make it another part */
	const char *name;
} model_words[] = {
	{"GB200", {NULL, NULL}, "gb200"},
	{"B200", {NULL, NULL}, "b200"},
	{"H200", {NULL, NULL}, "h200"},
	{"H100", {"PCIe", "NVL"}, "h100-sxm"},
	{"MI300X", {NULL, NULL}, "mi300x"},
	{"MI250X", {NULL, NULL}, "mi250x"},
	{"MI250", {NULL, NULL}, "mi250x"},
	{"MI200", {NULL, NULL}, "mi250x"},
};

static bool is_other_part(const char *model, const char *const unless[2])
{
	for (int i = 0; i < 2; i++)
		if (unless[i] != NULL && has_word(model, unless[i]))
			return true;
	return false;
}

const struct dtplan_gpu *dtplan_gpu_match(const char *model, double memory_bytes)
{
	const struct dtplan_gpu *g = NULL;

	if (model == NULL || model[0] == '\0')
		return NULL;
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(pci_ids); i++)
		if (dtplan__streq_nocase(model, pci_ids[i].ids))
			return dtplan_gpu_find(pci_ids[i].name, NULL);
	for (size_t i = 0; g == NULL && i < DTPLAN_ARRAY_SIZE(model_words); i++)
		if (has_word(model, model_words[i].word) &&
		    !is_other_part(model, model_words[i].unless))
			g = dtplan_gpu_find(model_words[i].name, NULL);
	if (g == NULL && has_word(model, "A100")) {
		if (strstr(model, "80GB") != NULL || memory_bytes > 60e9)
			g = dtplan_gpu_find("a100-80gb", NULL);
		else if (strstr(model, "40GB") != NULL || memory_bytes > 0)
			g = dtplan_gpu_find("a100-40gb", NULL);
	}
	if (g == NULL)
		g = dtplan_gpu_find(model, NULL); /* a catalog name itself */
	return g;
}
