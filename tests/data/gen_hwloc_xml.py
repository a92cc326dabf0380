#!/usr/bin/env python3
"""Generate the project's own hwloc v2 XML test fixtures.

Usage: gen_hwloc_xml.py [--hostname NAME] [--outdir DIR] [KIND ...]

KIND is one of hgx-h100-8gpu, pcie-4gpu, cpu-only, truncated, garbage (default:
all).  Each is written to DIR/KIND.xml (DIR defaults to this script's folder).
With --hostname NAME the files get that HostName info attribute and are written
as DIR/KIND-NAME.xml, so that each node of a test cluster can have its own.

The machines are invented (bus ids, GUIDs, UUIDs), small enough to read, and
shaped like real servers:
  hgx-h100-8gpu  2 packages, 8x H100 SXM (10de:2330), each behind its own PCIe
                 switch together with one ConnectX-7 (mlx5_N, InfiniBand);
                 4 NVSwitches (10de:22a3, subtype NVSwitch as hwloc's NVML
                 backend sets it, which the switch-port merge needs); an NVLinkBandwidth matrix between
                 the GPUs and the switches of 112500 MB/s per GPU-switch link,
                 so that after merging switch ports every GPU reaches the
                 merged switch at 4 x 112500 = 450000 MB/s.
  pcie-4gpu      2 packages, 4x L40S (10de:26b9) on PCIe, 2 per socket, one
                 RoCE ConnectX-6 Dx (LID 0) per socket, an ASPEED BMC VGA;
                 no NVLink.
  cpu-only       2 packages, an Omni-Path HFI (hfi1_0), a Matrox BMC VGA.
  truncated      hgx-h100-8gpu cut in the middle of an element.
  garbage        not XML at all.

Files load with hwloc 2.9 (lstopo --input FILE).  Python 3 stdlib only.
"""
import argparse
import os
import sys


class Gen:
    """Builds one topology; gp indexes are handed out in creation order."""

    def __init__(self, cores_per_pkg, packages):
        self.gp = 0
        self.cores_per_pkg = cores_per_pkg
        self.packages = packages
        self.lines = []

    def next_gp(self):
        self.gp += 1
        return self.gp

    @staticmethod
    def mask(bits):
        """hwloc bitmap string for a set of bit numbers."""
        value = 0
        for b in bits:
            value |= 1 << b
        words = []
        while True:
            words.append("0x%08x" % (value & 0xFFFFFFFF))
            value >>= 32
            if value == 0:
                break
        return ",".join(reversed(words))

    def sets(self, cpus, nodes):
        c = self.mask(cpus)
        n = self.mask(nodes)
        return ('cpuset="%s" complete_cpuset="%s" nodeset="%s" complete_nodeset="%s"'
                % (c, c, n, n))


def info(name, value):
    return '<info name="%s" value="%s"/>' % (name, value)


def emit(out, depth, text):
    out.append("  " * depth + text)


def pci_dev(g, out, depth, busid, cls, vid, did, vendor_name, dev_name, osdevs, subtype=None):
    """A PCI device with OS devices [(name, osdev_type, subtype, infos)].
    Returns {osdev name: gp} and the device's own gp."""
    gp = g.next_gp()
    sub = ' subtype="%s"' % subtype if subtype else ""
    emit(out, depth, '<object type="PCIDev" gp_index="%d"%s pci_busid="%s" '
         'pci_type="%s [%s:%s] [%s:0000] 00" pci_link_speed="31.507692">'
         % (gp, sub, busid, cls, vid, did, vid))
    emit(out, depth + 1, info("PCIVendor", vendor_name))
    emit(out, depth + 1, info("PCIDevice", dev_name))
    gps = {}
    for name, ostype, subtype, infos in osdevs:
        ogp = g.next_gp()
        gps[name] = ogp
        sub = ' subtype="%s"' % subtype if subtype else ""
        emit(out, depth + 1, '<object type="OSDev" gp_index="%d" name="%s"%s osdev_type="%d">'
             % (ogp, name, sub, ostype))
        for k, v in infos:
            emit(out, depth + 2, info(k, v))
        emit(out, depth + 1, "</object>")
    emit(out, depth, "</object>")
    return gps, gp


def bridge_open(g, out, depth, lo, hi, busid=None):
    gp = g.next_gp()
    if busid is None:
        emit(out, depth, '<object type="Bridge" gp_index="%d" bridge_type="0-1" depth="0" '
             'bridge_pci="0000:[%02x-%02x]">' % (gp, lo, hi))
    else:
        emit(out, depth, '<object type="Bridge" gp_index="%d" bridge_type="1-1" depth="1" '
             'bridge_pci="0000:[%02x-%02x]" pci_busid="%s" '
             'pci_type="0604 [1000:c030] [1000:100b] 00" pci_link_speed="31.507692">'
             % (gp, lo, hi, busid))


def ib_osdevs(idx, lid, guid):
    return [("ibp%ds0" % (0x20 + idx), 2, None, [("Port", "1")]),
            ("mlx5_%d" % idx, 3, None,
             [("NodeGUID", guid), ("SysImageGUID", guid), ("Port1State", "4"),
              ("Port1LID", lid), ("Port1LMC", "0")])]


def h100_osdevs(idx):
    return [("nvml%d" % idx, 1, "NVML",
             [("Backend", "NVML"), ("GPUVendor", "NVIDIA Corporation"),
              ("GPUModel", "NVIDIA H100 80GB HBM3"),
              ("NVIDIAUUID", "GPU-d7a0c0de-0000-4000-8000-%012x" % idx)])]


def topology(g, hostname, product, io_per_pkg, distances=None):
    """io_per_pkg(g, out, pkg, depth) writes the I/O under package pkg."""
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<!DOCTYPE topology SYSTEM "hwloc2.dtd">',
           '<topology version="2.0">']
    ncpu = g.cores_per_pkg * g.packages
    emit(out, 1, '<object type="Machine" os_index="0" %s gp_index="%d">'
         % (g.sets(range(ncpu), range(g.packages)), g.next_gp()))
    emit(out, 2, info("DMIProductName", product))
    emit(out, 2, info("Architecture", "x86_64"))
    emit(out, 2, info("HostName", hostname))
    for p in range(g.packages):
        cpus = range(p * g.cores_per_pkg, (p + 1) * g.cores_per_pkg)
        emit(out, 2, '<object type="Package" os_index="%d" %s gp_index="%d">'
             % (p, g.sets(cpus, [p]), g.next_gp()))
        emit(out, 3, '<object type="NUMANode" os_index="%d" %s gp_index="%d" '
             'local_memory="68719476736"/>' % (p, g.sets(cpus, [p]), g.next_gp()))
        for c in cpus:
            emit(out, 3, '<object type="Core" os_index="%d" %s gp_index="%d">'
                 % (c, g.sets([c], [p]), g.next_gp()))
            emit(out, 4, '<object type="PU" os_index="%d" %s gp_index="%d"/>'
                 % (c, g.sets([c], [p]), g.next_gp()))
            emit(out, 3, "</object>")
        io_per_pkg(g, out, p, 3)
        emit(out, 2, "</object>")
    emit(out, 1, "</object>")
    if distances:
        out.extend(distances)
    out.append("</topology>")
    return "\n".join(out) + "\n"


def chunked(tag, items, per=10):
    """hwloc writes long distance arrays in chunks; length counts characters."""
    lines = []
    for i in range(0, len(items), per):
        text = "".join("%s " % x for x in items[i:i + per])
        lines.append('    <%s length="%d">%s</%s>' % (tag, len(text), text, tag))
    return lines


def hgx(hostname):
    g = Gen(cores_per_pkg=8, packages=2)
    gpus = []      # gp of each nvmlN OS device, in GPU order
    switches = []  # gp of each NVSwitch PCI device

    def io(g, out, p, depth):
        for k in range(4):
            idx = p * 4 + k
            bus = 0x18 + 0x20 * idx
            bridge_open(g, out, depth, bus, bus + 3)
            bridge_open(g, out, depth + 1, bus + 1, bus + 3, "0000:%02x:00.0" % bus)
            bridge_open(g, out, depth + 2, bus + 2, bus + 2, "0000:%02x:00.0" % (bus + 1))
            lid = "0x%x" % (0x10 + idx)
            guid = "b0cf:0e03:00%02x:0000" % idx
            pci_dev(g, out, depth + 3, "0000:%02x:00.0" % (bus + 2), "0207", "15b3", "1021",
                    "Mellanox Technologies", "MT2910 Family [ConnectX-7]",
                    ib_osdevs(idx, lid, guid))
            emit(out, depth + 2, "</object>")
            bridge_open(g, out, depth + 2, bus + 3, bus + 3, "0000:%02x:01.0" % (bus + 1))
            gps, _ = pci_dev(g, out, depth + 3, "0000:%02x:00.0" % (bus + 3), "0302", "10de",
                             "2330", "NVIDIA Corporation", "GH100 [H100 SXM5 80GB]",
                             h100_osdevs(idx))
            gpus.append(gps["nvml%d" % idx])
            emit(out, depth + 2, "</object>")
            emit(out, depth + 1, "</object>")
            emit(out, depth, "</object>")
        if p == 1:
            bridge_open(g, out, depth, 0xe0, 0xe4)
            for s in range(4):
                _, gp = pci_dev(g, out, depth + 1, "0000:%02x:00.0" % (0xe1 + s), "0680",
                                "10de", "22a3", "NVIDIA Corporation", "GH100 [H100 NVSwitch]",
                                [], subtype="NVSwitch")
                switches.append(gp)
            emit(out, depth, "</object>")

    # The distances need the gp indexes, so generate the body first.
    body = topology(g, hostname, "dtplan test HGX H100 8-GPU (generated)", io)
    objs = ["OSDev:%d" % x for x in gpus] + ["PCIDev:%d" % x for x in switches]
    n = len(objs)
    values = []
    for i in range(n):
        for j in range(n):
            gpu_i, gpu_j = i < len(gpus), j < len(gpus)
            values.append(112500 if gpu_i != gpu_j else 0)
    dist = ['  <distances2hetero nbobjs="%d" kind="25" name="NVLinkBandwidth">' % n]
    dist += chunked("indexes", objs)
    dist += chunked("u64values", values)
    dist.append("  </distances2hetero>")
    return body.replace("</topology>\n", "\n".join(dist) + "\n</topology>\n")


def pcie4(hostname):
    g = Gen(cores_per_pkg=6, packages=2)

    def io(g, out, p, depth):
        bus = 0x30 + 0x40 * p
        bridge_open(g, out, depth, bus, bus + 4)
        for k in range(2):
            idx = p * 2 + k
            bridge_open(g, out, depth + 1, bus + 1 + k, bus + 1 + k, "0000:%02x:%02x.0"
                        % (bus, k + 1))
            pci_dev(g, out, depth + 2, "0000:%02x:00.0" % (bus + 1 + k), "0302", "10de", "26b9",
                    "NVIDIA Corporation", "AD102GL [L40S]",
                    [("card%d" % (idx + 1), 1, "Display", [])])
            emit(out, depth + 1, "</object>")
        bridge_open(g, out, depth + 1, bus + 3, bus + 3, "0000:%02x:03.0" % bus)
        mac = "0c:42:a1:00:00:%02x" % p
        pci_dev(g, out, depth + 2, "0000:%02x:00.0" % (bus + 3), "0200", "15b3", "101d",
                "Mellanox Technologies", "MT2892 Family [ConnectX-6 Dx]",
                [("ens%df0np0" % (p + 1), 2, None, [("Address", mac), ("Port", "1")]),
                 ("mlx5_%d" % p, 3, None,
                  [("NodeGUID", "0c42:a103:0000:00%02x" % p), ("Port1State", "4"),
                   ("Port1LID", "0x0"), ("Port1LMC", "0")])])
        emit(out, depth + 1, "</object>")
        if p == 0:
            pci_dev(g, out, depth + 1, "0000:%02x:04.0" % bus, "0300", "1a03", "2000",
                    "ASPEED Technology, Inc.", "ASPEED Graphics Family",
                    [("card0", 1, "Display", [])])
        emit(out, depth, "</object>")

    return topology(g, hostname, "dtplan test PCIe 4-GPU (generated)", io)


def cpu_only(hostname):
    g = Gen(cores_per_pkg=4, packages=2)

    def io(g, out, p, depth):
        if p != 0:
            return
        bridge_open(g, out, depth, 0x00, 0x02)
        pci_dev(g, out, depth + 1, "0000:01:00.0", "0208", "8086", "24f0",
                "Intel Corporation", "Omni-Path HFI Silicon 100 Series [discrete]",
                [("ib0", 2, None, [("Port", "1")]),
                 ("hfi1_0", 3, None, [("Port1State", "4"), ("Port1LID", "0x5"),
                                      ("Port1LMC", "0")])])
        pci_dev(g, out, depth + 1, "0000:02:00.0", "0300", "102b", "0534",
                "Matrox Electronics Systems Ltd.", "G200eR2", [("card0", 1, "Display", [])])
        emit(out, depth, "</object>")

    return topology(g, hostname, "dtplan test CPU node (generated)", io)


KINDS = {
    "hgx-h100-8gpu": hgx,
    "pcie-4gpu": pcie4,
    "cpu-only": cpu_only,
    "truncated": lambda h: hgx(h)[:len(hgx(h)) // 2],
    "garbage": lambda h: "this is not an hwloc topology\n\x01\x02 <<<>>> {]\n",
}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hostname", help="HostName info value; also suffixes the file names")
    ap.add_argument("--outdir", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("kinds", nargs="*", choices=[[]] + sorted(KINDS), default=[])
    args = ap.parse_args(argv)
    kinds = args.kinds or sorted(KINDS)
    for kind in kinds:
        host = args.hostname or {"hgx-h100-8gpu": "hgx01", "pcie-4gpu": "pcie01"}.get(kind,
                                                                                 "cpu01")
        name = "%s-%s.xml" % (kind, args.hostname) if args.hostname else kind + ".xml"
        path = os.path.join(args.outdir, name)
        with open(path, "w") as f:
            f.write(KINDS[kind](host))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
