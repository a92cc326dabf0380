/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nvml.c: optional NVIDIA Management Library support, loaded at run time.
 *
 * libnvidia-ml.so.1 is opened with dlopen() and never linked, so dtplan
 * builds and runs without it.  When present it tells what hwloc cannot see
 * on nodes whose NVSwitches sit outside the node (GB200 NVL72): the fabric
 * cluster UUID and clique id of each GPU, which name a multi-node NVLink
 * domain.  The few NVML types used are declared here, from NVML's public
 * API reference (nvml.h), so that no NVML header is needed to build.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "probes_private.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* nvml.h: nvmlReturn_t, NVML_SUCCESS. */
typedef int nvml_return;
#define NVML_OK 0

/* nvml.h: nvmlDevice_t is an opaque pointer. */
typedef struct nvml_device *nvml_device;

/* nvml.h: nvmlGpuFabricInfo_t (driver 525+), NVML_GPU_FABRIC_UUID_LEN 16,
 * nvmlGpuFabricState_t an unsigned char, NVML_GPU_FABRIC_STATE_COMPLETED 3. */
#define NVML_FABRIC_UUID_LEN 16
#define NVML_FABRIC_STATE_COMPLETED 3
struct nvml_fabric_info {
	unsigned char cluster_uuid[NVML_FABRIC_UUID_LEN];
	nvml_return status;
	unsigned int clique_id;
	unsigned char state;
};

/* nvml.h: NVML_NVLINK_MAX_LINKS (18 on Hopper); nvmlEnableState_t. */
#define NVML_NVLINK_MAX_LINKS 18

struct nvml_api {
	void *handle;
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	nvml_return (*by_bus_id)(const char *bus_id, nvml_device *dev);
	nvml_return (*fabric_info)(nvml_device dev, struct nvml_fabric_info *info);
	nvml_return (*nvlink_state)(nvml_device dev, unsigned int link, int *active);
};

static bool nvml_open(struct nvml_api *api)
{
	memset(api, 0, sizeof(*api));
	api->handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (api->handle == NULL) {
		dtplan__log(DTPLAN_LOG_DEBUG, "nvml: not available: %s", dlerror());
		return false;
	}
	*(void **)&api->init = dlsym(api->handle, "nvmlInit_v2");
	*(void **)&api->shutdown = dlsym(api->handle, "nvmlShutdown");
	*(void **)&api->by_bus_id = dlsym(api->handle, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&api->fabric_info = dlsym(api->handle, "nvmlDeviceGetGpuFabricInfo");
	*(void **)&api->nvlink_state = dlsym(api->handle, "nvmlDeviceGetNvLinkState");
	if (api->init == NULL || api->shutdown == NULL || api->by_bus_id == NULL) {
		dtplan__log(DTPLAN_LOG_DEBUG, "nvml: library lacks the functions needed");
		dlclose(api->handle);
		api->handle = NULL;
		return false;
	}
	if (api->init() != NVML_OK) {
		dtplan__log(DTPLAN_LOG_DEBUG, "nvml: nvmlInit failed (no driver loaded?)");
		dlclose(api->handle);
		api->handle = NULL;
		return false;
	}
	return true;
}

static void nvml_close(struct nvml_api *api)
{
	if (api->handle == NULL)
		return;
	api->shutdown();
	dlclose(api->handle);
	api->handle = NULL;
}

/* "<cluster uuid>/<clique id>" for a GPU whose fabric registration is done. */
static void gpu_fabric_id(struct nvml_api *api, nvml_device dev, char *out, size_t size)
{
	struct nvml_fabric_info info;
	char uuid[2 * NVML_FABRIC_UUID_LEN + 1];
	bool zero = true;

	out[0] = '\0';
	if (api->fabric_info == NULL)
		return;
	memset(&info, 0, sizeof(info));
	if (api->fabric_info(dev, &info) != NVML_OK || info.state != NVML_FABRIC_STATE_COMPLETED ||
	    info.status != NVML_OK)
		return;
	for (int i = 0; i < NVML_FABRIC_UUID_LEN; i++) {
		snprintf(uuid + 2 * i, 3, "%02x", info.cluster_uuid[i]);
		if (info.cluster_uuid[i] != 0)
			zero = false;
	}
	if (!zero)
		snprintf(out, size, "%s/%u", uuid, info.clique_id);
}

static int active_nvlinks(struct nvml_api *api, nvml_device dev)
{
	int n = 0;

	if (api->nvlink_state == NULL)
		return -1;
	for (unsigned int l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		int active = 0;

		if (api->nvlink_state(dev, l, &active) == NVML_OK && active)
			n++;
	}
	return n;
}

void dtprobe__nvml_annotate(struct dtplan_node *n)
{
	char ids[DTPLAN_NODE_MAX_GPUS][DTPLAN__FABRIC_ID_MAX];
	struct nvml_api api;
	bool any = false;

	if (n == NULL || n->n_gpus == 0)
		return;
	if (!nvml_open(&api))
		return;
	memset(ids, 0, sizeof(ids));
	for (int i = 0; i < n->n_gpus; i++) {
		nvml_device dev = NULL;

		if (strcmp(n->gpus[i].vendor, "nvidia") != 0 || n->gpus[i].pci_bus_id[0] == '\0')
			continue;
		if (api.by_bus_id(n->gpus[i].pci_bus_id, &dev) != NVML_OK) {
			dtplan__log(DTPLAN_LOG_DEBUG, "nvml: no device at %s",
				    n->gpus[i].pci_bus_id);
			continue;
		}
		gpu_fabric_id(&api, dev, ids[i], sizeof(ids[i]));
		if (ids[i][0] != '\0')
			any = true;
		dtplan__log(DTPLAN_LOG_DEBUG, "nvml: GPU %d (%s): fabric '%s', %d active NVLinks",
			    i, n->gpus[i].pci_bus_id, ids[i], active_nvlinks(&api, dev));
	}
	nvml_close(&api);
	if (any)
		dtprobe__node_apply_fabric_ids(n, (const char(*)[DTPLAN__FABRIC_ID_MAX])ids);
}

void dtprobe__node_apply_fabric_ids(struct dtplan_node *n,
				    const char (*fabric_ids)[DTPLAN__FABRIC_ID_MAX])
{
	struct dtplan_node_domain old[DTPLAN_NODE_MAX_GPUS];
	int n_old = n->n_domains;
	int new_of_old[DTPLAN_NODE_MAX_GPUS];

	/* Domains sharing a fabric id are one domain; the id of a domain is that
	 * of its first GPU that has one. */
	memcpy(old, n->domains, sizeof(old[0]) * (size_t)n_old);
	for (int d = 0; d < n_old; d++) {
		old[d].fabric_id[0] = '\0';
		for (int k = 0; k < old[d].n_gpus && old[d].fabric_id[0] == '\0'; k++)
			dtplan__strlcpy(old[d].fabric_id, fabric_ids[old[d].gpus[k]],
					sizeof(old[d].fabric_id));
	}
	n->n_domains = 0;
	for (int d = 0; d < n_old; d++) {
		int target = -1;

		for (int e = 0; e < n->n_domains && old[d].fabric_id[0] != '\0'; e++)
			if (strcmp(n->domains[e].fabric_id, old[d].fabric_id) == 0)
				target = e;
		if (target < 0) {
			target = n->n_domains++;
			n->domains[target] = old[d];
			new_of_old[d] = target;
			continue;
		}
		new_of_old[d] = target;
		for (int k = 0; k < old[d].n_gpus; k++)
			n->domains[target].gpus[n->domains[target].n_gpus++] = old[d].gpus[k];
		if (old[d].bandwidth_bytes_per_s > 0 &&
		    (n->domains[target].bandwidth_bytes_per_s == 0 ||
		     old[d].bandwidth_bytes_per_s < n->domains[target].bandwidth_bytes_per_s))
			n->domains[target].bandwidth_bytes_per_s = old[d].bandwidth_bytes_per_s;
	}
	for (int i = 0; i < n->n_gpus; i++)
		if (n->gpus[i].domain >= 0 && n->gpus[i].domain < n_old)
			n->gpus[i].domain = new_of_old[n->gpus[i].domain];
	/* Keep GPU indexes ascending inside a merged domain. */
	for (int e = 0; e < n->n_domains; e++) {
		struct dtplan_node_domain *dm = &n->domains[e];

		for (int a = 1; a < dm->n_gpus; a++)
			for (int b = a; b > 0 && dm->gpus[b - 1] > dm->gpus[b]; b--) {
				int t = dm->gpus[b];

				dm->gpus[b] = dm->gpus[b - 1];
				dm->gpus[b - 1] = t;
			}
	}
}
