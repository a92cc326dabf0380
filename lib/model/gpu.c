/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gpu.c: catalog of accelerator types.
 *
 * memory_bytes is the memory the device reports (nvidia-smi's total: an "80 GB"
 * H100 reports 81,559 MiB), where a report was found, else the datasheet's
 * decimal figure.  Peaks are the vendors' dense (not sparse) figures; NVLink /
 * Infinity Fabric bandwidth per GPU as marketed (both directions summed);
 * domain_size the usual NVLink/xGMI domain of a server or rack built from
 * that part; host_bytes_per_s the host link per direction.  nvls whether
 * that domain's switches reduce (NVLink SHARP, NCCL's NVLS algorithm):
 * NVIDIA introduced it with the third-generation NVSwitch of HGX H100
 * (NVIDIA's "NVLink and NVLink Switch" page; the H100 Tensor Core GPU
 * Architecture whitepaper, "NVLink SHARP"), on the H800's HGX baseboard
 * too, and kept it in Blackwell's NVLink switch (HGX B200/B300, GB200/GB300
 * NVL72); A100's NVSwitch, PCIe parts and AMD's xGMI have none.  A GPU
 * described outside the catalog has none.
 *
 * matmul_efficiency is the best bf16 matrix multiply measured on the part over
 * its peak: the "Maximum Achievable Matmul FLOPS" table of Stas Bekman's
 * ml-engineering (compute/accelerator/README.md): A100 SXM 267.9 of 312
 * (85.9%), GH200 821.0 of 989 (83.0%), H100 SXM 792.1 of 989 (80.1%), MI250X
 * 147.0 of 191.5 per GCD (76.7%), MI300X 781.9 of 1300 (60.1%).  fp8_efficiency
 * likewise from Azure's AI-benchmarking-guide (cuBLASLt, largest square
 * GEMM): ND H100 v5 1382.2 of 1979 (69.8%).  Parts nobody measured in those
 * tables take their nearest sibling's figure, and say so.  Blackwell's fp8
 * figure there, ND GB200 v6 2819.5 of 4900 (57.5%), is not a ceiling the
 * published runs stay under: Megatron-Bridge's GB300 Llama 3.1 405B in FP8
 * sustains 2,646 model TFLOP/s (53% of the 5 PFLOPS peak with its attention
 * in bf16, its pipeline bubble and its communication: the GEMMs themselves
 * run faster than 57.5%; docs/performance-summary-archive.md, 26.06,
 * 067f987).  The Blackwell parts' fp8 (and fp4) ceiling is therefore their
 * datasheet peak, and BLACKWELL_GEMM the share of it their GEMMs sustain.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "model/model.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MIB (1024.0 * 1024.0)

/*
 * Calibrated on the published runs of tests/data/reference-runs.json by
 * tests/calibrate.py (doc/internals/cost-model.md, "Calibration"), with
 * DTPLAN__ZERO3_OVERLAP_TAX (lib/plan/plan.h); one pair per GPU
 * generation, never per run:
 *
 *   *_GEMM    the share of the measured matmul ceiling (matmul_efficiency)
 *             that training GEMMs sustain: clocks under power capping and the
 *             gaps between kernels;
 *   *_ATTN    FlashAttention's rate over that ceiling.
 *
 * Ampere: the A100 rows (Narayanan et al. 2021, Korthikanti et al. 2022,
 * BLOOM, GPT-NeoX, llm-foundry); Hopper: the H100, H200 and H800 rows (Llama
 * 3, NeMo, Megatron-Bridge, dgxc-benchmarking, llm-foundry, torchtitan,
 * DeepSeek-V3); Blackwell: the B200, GB200, B300 and GB300 rows (Megatron-
 * Bridge's performance tables), fitted on those rows only.  The AMD parts
 * have too few published runs to fit: MI300X takes Hopper's, MI250X (an
 * A100 contemporary) Ampere's.
 */
/* fitted with the wait for the slowest GPU in the step (issue 34:
 * lib/plan/straggler.c), which the measured runs include (0.832, 0.451,
 * 0.826 and 0.236 before), then with the collectives' latency as NCCL runs
 * them and the DP/ZeRO buckets (lib/cost/comm.c), and Blackwell's rows on
 * shares of their own (0.881, 0.452, 0.870 and 0.250 before both).
 * BLACKWELL_GEMM sits at the top of its range, the peak: the fit wants the
 * Blackwell rows faster than the model makes them, mostly Llama 3 70B's,
 * for which the ledger (fp32 main gradients among it) leaves no room
 * without recomputing every layer, where Megatron-Bridge's benchmarks run
 * without recomputation and reduce gradients in bf16 (doc/internals/
 * cost-model.md, "Calibration"). */
#define AMPERE_GEMM 0.889
#define AMPERE_ATTN 0.448
#define HOPPER_GEMM 0.881
#define HOPPER_ATTN 0.235
#define BLACKWELL_GEMM 1.0
#define BLACKWELL_ATTN 0.233

static const struct dtplan_gpu catalog[] = {
	/* A100 SXM4 datasheet: 312 TFLOPS bf16 dense, NVLink 3 600 GB/s, HGX 8,
	 * HBM2 1,555 GB/s (40 GB) and HBM2e 2,039 GB/s (80 GB), 108 SMs, PCIe Gen4
	 * 64 GB/s (32 each way).  nvidia-smi: 40960 MiB and 81920 MiB. */
	{"a100-40gb", "nvidia", 40960 * MIB, 312e12, 600e9, 8, 1555e9, 0.859, 0, 0, 108, 32e9,
	 AMPERE_GEMM, AMPERE_ATTN, 0, DTPLAN_NVLS_NONE},
	{"a100-80gb", "nvidia", 81920 * MIB, 312e12, 600e9, 8, 2039e9, 0.859, 0, 0, 108, 32e9,
	 AMPERE_GEMM, AMPERE_ATTN, 0, DTPLAN_NVLS_NONE},
	/* H100 SXM5: 989 TFLOPS bf16 and 1979 fp8 dense, NVLink 4 900 GB/s, HGX 8,
	 * HBM3 3.35 TB/s, 132 SMs, PCIe Gen5 128 GB/s.  nvidia-smi: 81559 MiB. */
	{"h100-sxm", "nvidia", 81559 * MIB, 989e12, 900e9, 8, 3350e9, 0.801, 1979e12, 0.698, 132,
	 64e9, HOPPER_GEMM, HOPPER_ATTN, 0, DTPLAN_NVLS_HOPPER},
	/* H100 96 GB: the H100 SXM5 die with six HBM2e stacks, 96 GB at 2.4 TB/s,
	 * as in Meta's Grand Teton hosts (torchtitan's benchmarks/llama3_h100_
	 * 202412_torchtitan.md, "Hardware"), there capped at 500 W of the 700 W
	 * TDP: a cap the model does not know, so its clocks are taken as
	 * h100-sxm's.  No nvidia-smi report found: the decimal 96 GB. */
	{"h100-96gb", "nvidia", 96e9, 989e12, 900e9, 8, 2400e9, 0.801, 1979e12, 0.698, 132, 64e9,
	 HOPPER_GEMM, HOPPER_ATTN, 0, DTPLAN_NVLS_HOPPER},
	/* H800 SXM: the H100 part sold where the H100 was not, NVLink cut to 400
	 * GB/s (DeepSeek-V3 technical report, arXiv 2412.19437, section 3.1:
	 * "about 160 GB/s" achieved one way); the rest H100's. */
	{"h800", "nvidia", 81559 * MIB, 989e12, 400e9, 8, 3350e9, 0.801, 1979e12, 0.698, 132, 64e9,
	 HOPPER_GEMM, HOPPER_ATTN, 0, DTPLAN_NVLS_HOPPER},
	/* H200 SXM: the H100 die with 141 GB HBM3e at 4.8 TB/s; matmul as GH200's
	 * (the same die and memory); fp8 as H100's.  nvidia-smi: 143771 MiB. */
	{"h200", "nvidia", 143771 * MIB, 989e12, 900e9, 8, 4800e9, 0.830, 1979e12, 0.698, 132, 64e9,
	 HOPPER_GEMM, HOPPER_ATTN, 0, DTPLAN_NVLS_HOPPER},
	/* DGX B200: 1,440 GB over 8 GPUs, 2.25 PFLOPS bf16 and 4.5 fp8 dense, NVLink 5
	 * 1.8 TB/s, HBM3e 8 TB/s, 148 SMs.  No bf16 measurement in the table:
	 * H100's; fp8 and fp4 at their peak.  FP4: NVIDIA HGX B200 datasheet, "FP4 Tensor
	 * Core" 144 PFLOPS with sparsity over 8 GPUs, 9 PFLOPS dense each. */
	{"b200", "nvidia", 180e9, 2.25e15, 1.8e12, 8, 8000e9, 0.801, 4.5e15, 1.0, 148, 64e9,
	 BLACKWELL_GEMM, BLACKWELL_ATTN, 9e15, DTPLAN_NVLS_BLACKWELL},
	/* GB200 NVL72: 13.5 TB HBM3e over 72 GPUs (about 186 GB each), one NVLink
	 * domain; 2.45 PFLOPS bf16 and 4.9 fp8 (NVIDIA's dgxc-benchmarking
	 * recipes); NVLink-C2C 900 GB/s to the Grace CPU.  bf16 matmul: H100's.
	 * FP4: NVIDIA GB200 NVL72 datasheet, "FP4 Tensor Core" 1,440 PFLOPS with
	 * sparsity over 72 GPUs, 10 PFLOPS dense each. */
	{"gb200", "nvidia", 186e9, 2.45e15, 1.8e12, 72, 8000e9, 0.801, 4.9e15, 1.0, 148, 450e9,
	 BLACKWELL_GEMM, BLACKWELL_ATTN, 10e15, DTPLAN_NVLS_BLACKWELL},
	/* GB300 NVL72 (Blackwell Ultra), NVIDIA's GB300 NVL72 datasheet, its
	 * specifications table, over 72 GPUs: "FP4 Tensor Core" 1,440 | 1,080
	 * PFLOPS (sparse | dense): 15 PFLOPS dense each; "FP8/FP6 Tensor Core"
	 * 720 PFLOPS with sparsity: 5 dense; "FP16/BF16" 360 with sparsity: 2.5
	 * dense; GPU memory 20 TB HBM3e (288 GB each, 12-high stacks) at 576 TB/s
	 * (8 TB/s each); NVLink 130 TB/s (NVLink 5, 1.8 TB/s each), one domain
	 * of 72; NVLink-C2C 900 GB/s to Grace (450 each way).  160 SMs (NVIDIA's
	 * "Inside NVIDIA Blackwell Ultra" blog).  No nvidia-smi report found:
	 * the decimal 288 GB.  No measured matmul yet: GB200's bf16 efficiency. */
	{"gb300", "nvidia", 288e9, 2.5e15, 1.8e12, 72, 8000e9, 0.801, 5e15, 1.0, 160, 450e9,
	 BLACKWELL_GEMM, BLACKWELL_ATTN, 15e15, DTPLAN_NVLS_BLACKWELL},
	/* HGX B300 (Blackwell Ultra), NVIDIA's HGX B300 datasheet, its
	 * specifications table, over 8 GPUs: "FP4 Tensor Core" 144 | 105 PFLOPS
	 * (sparse | dense): 13.1 PFLOPS dense each; "FP8/FP6" 72 PFLOPS with
	 * sparsity: 4.5 dense; "FP16/BF16" 36 with sparsity: 2.25 dense; total
	 * memory 2.3 TB (288 GB HBM3e each, 8 TB/s); "NVSwitch GPU-to-GPU
	 * bandwidth" 1.8 TB/s (NVLink 5), 8 a domain; PCIe Gen6 x16 to the host
	 * (128 GB/s each way).  160 SMs; efficiencies as b200's. */
	{"b300", "nvidia", 288e9, 2.25e15, 1.8e12, 8, 8000e9, 0.801, 4.5e15, 1.0, 160, 128e9,
	 BLACKWELL_GEMM, BLACKWELL_ATTN, 13.125e15, DTPLAN_NVLS_BLACKWELL},
	/* MI250X: 128 GB HBM2e at 3.2768 TB/s, 383 TFLOPS bf16 over 2 GCDs of 110
	 * CUs, 8 Infinity Fabric links of 100 GB/s, PCIe Gen4. */
	{"mi250x", "amd", 128e9, 383e12, 800e9, 8, 3276.8e9, 0.767, 0, 0, 220, 32e9, AMPERE_GEMM,
	 AMPERE_ATTN, 0, DTPLAN_NVLS_NONE},
	/* MI300X: 192 GB HBM3 at 5.3 TB/s, 1307 TFLOPS bf16 and 2615 fp8 dense, 304
	 * CUs, 7 links of 128 GB/s = 896 GB/s, PCIe Gen5.  fp8: its bf16 figure. */
	{"mi300x", "amd", 192e9, 1307e12, 896e9, 8, 5300e9, 0.601, 2615e12, 0.601, 304, 64e9,
	 HOPPER_GEMM, HOPPER_ATTN, 0, DTPLAN_NVLS_NONE},
};

/* Other spellings people use for a catalog entry. */
static const struct {
	const char *alias;
	const char *name;
} aliases[] = {
	{"h100", "h100-sxm"},     {"h100-sxm5", "h100-sxm"}, {"h800-sxm", "h800"},
	{"gb200-nvl72", "gb200"}, {"gb300-nvl72", "gb300"},
};

double dtplan__gpu_gemm_sustained(const struct dtplan_gpu *g)
{
	return g->gemm_sustained > 0.0 ? g->gemm_sustained : HOPPER_GEMM;
}

double dtplan__gpu_attention_efficiency(const struct dtplan_gpu *g)
{
	return g->attention_efficiency > 0.0 ? g->attention_efficiency : HOPPER_ATTN;
}

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
	{"GB300", {NULL, NULL}, "gb300"},   {"B300", {NULL, NULL}, "b300"},
	{"GB200", {NULL, NULL}, "gb200"},   {"B200", {NULL, NULL}, "b200"},
	{"H200", {NULL, NULL}, "h200"},     {"H100", {"PCIe", "NVL"}, "h100-sxm"},
	{"MI300X", {NULL, NULL}, "mi300x"}, {"MI250X", {NULL, NULL}, "mi250x"},
	{"MI250", {NULL, NULL}, "mi250x"},  {"MI200", {NULL, NULL}, "mi250x"},
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
	/* the 96 GB H100 says "H100" too (and no NVL or PCIe): its memory
	 * tells it, as for the A100s */
	if (g != NULL && strcmp(g->name, "h100-sxm") == 0 &&
	    (strstr(model, "96GB") != NULL || memory_bytes > 90e9))
		g = dtplan_gpu_find("h100-96gb", NULL);
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
