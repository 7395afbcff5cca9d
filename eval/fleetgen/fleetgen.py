#!/usr/bin/env python3
"""fleetgen: SuperBench fleet results with labelled defects (eval/fleetgen/README.md).

Standard library only. Output is a function of the options and the seed: every random draw comes
from one random.Random(seed) consumed in a fixed order.
"""
import argparse
import json
import math
import os
import random
import re
import sys

# ----------------------------------------------------------------------------------------------
# Figures. "n02" = node sb-validation-02 of /work/shared/data/superbench/test_results.jsonl (real
# 8xA100 node); "ndv4" = ndv4-quickscan/baseline.json; "sb-test" = a SuperBench unit test's real
# tool output; "assumed" = my own estimate, see README.
# ----------------------------------------------------------------------------------------------

GEMM_TYPES = ['FP64', 'FP32', 'FP16', 'FP64_TC', 'TF32_TC', 'BF16_TC', 'FP16_TC', 'INT8_TC', 'INT4_TC']
# n02: mean over 8 GPUs (GFLOPS) and GPU-to-GPU coefficient of variation (%).
GEMM_A100 = {'FP64': (9028.9, 0.122), 'FP32': (18338.7, 0.224), 'FP16': (33821.9, 0.259),
             'FP64_TC': (18926.9, 0.230), 'TF32_TC': (128124.0, 0.421), 'BF16_TC': (265068.0, 0.597),
             'FP16_TC': (279540.0, 0.636), 'INT8_TC': (475794.0, 0.699), 'INT4_TC': (972420.0, 0.629)}
# assumed: H100 SXM / A100 datasheet peak ratio; Hopper has no INT4 tensor-core GEMM.
GEMM_H100_RATIO = {'FP64': 34 / 9.7, 'FP32': 67 / 19.5, 'FP16': 134 / 78, 'FP64_TC': 67 / 19.5,
                   'TF32_TC': 495 / 156, 'BF16_TC': 989.5 / 312, 'FP16_TC': 989.5 / 312,
                   'INT8_TC': 1979 / 624}

IB_SIZES = [512 << i for i in range(15)]  # 512 B .. 8 MiB, as in n02
# n02: mean over 8 HCAs (MB/s) and HCA-to-HCA CV (%), per message size.
IB_A100 = {512: (1494.38, 1.201), 1024: (3242.99, 1.524), 2048: (6699.97, 1.387),
           4096: (12754.7, 4.919), 8192: (19529.9, 2.673), 16384: (22260.9, 2.680),
           32768: (23176.4, 1.222), 65536: (23423.8, 1.077), 131072: (23701.8, 0.433),
           262144: (23736.3, 0.847), 524288: (23832.3, 0.516), 1048576: (23892.3, 0.104),
           2097152: (23912.4, 0.113), 4194304: (23913.2, 0.112), 8388608: (23925.8, 0.051)}
IB_H100_RATIO = 2.0  # assumed: NDR 400 Gb/s against HDR 200 Gb/s, small sizes message-rate bound
IB_LARGE = 65536     # assumed: sizes from here on are bandwidth-bound (lower link rate shows)

# n02: all-reduce time (us) per size, 8 GPUs in one node; bandwidths derived as nccl-tests does.
NCCL_TIME_A100 = {8: 37.84, 16: 36.42, 32: 36.87, 64: 35.83, 128: 36.91, 256: 37.58, 512: 36.98,
                  1024: 36.93, 2048: 36.06, 4096: 37.2, 8192: 37.04, 16384: 37.46, 32768: 37.64,
                  65536: 38.22, 131072: 43.17, 262144: 48.29, 524288: 60.71, 1048576: 76.13,
                  2097152: 96.28, 4194304: 111.6, 8388608: 164.0, 16777216: 256.7,
                  33554432: 379.1, 67108864: 587.2, 134217728: 1157.2, 268435456: 2117.8,
                  536870912: 4184.2, 1073741824: 8164.5, 2147483648: 16207.0,
                  4294967296: 32059.0, 8589934592: 63870.0}
NCCL_SIZES = sorted(NCCL_TIME_A100)
NCCL_BUS = 2 * 7 / 8  # all-reduce bus-bandwidth factor for 8 ranks (nccl-tests)
NCCL_H100_LARGE = 235.0 / 480.0  # assumed: ~480 GB/s busbw on NVLink4 against 235 (n02)

KL_A100 = {'event': (0.0058, 2.903), 'wall': (0.010415, 1.909)}  # n02, ms
MEMBW_A100 = {'h2d': (25.8625, 1.093), 'd2h': (24.3875, 0.927), 'd2d': (1116.86, 0.423)}  # n02
# n02: gpu-sm-copy-bw per GPU (mean of the 4 blocks of 8 indexes) and the CV within an index.
SMCOPY_A100 = {'dtoh': [3.918, 4.4549, 1.2643, 1.3003, 1.3167, 1.2791, 4.4791, 3.9606],
               'htod': [23.9593, 23.9642, 19.9752, 20.2376, 20.4156, 20.099, 23.9718, 23.976]}
SMCOPY_CV = 0.1

# n02: (group, model): fp32 step ms, fp32 throughput, fp16 step ms, fp16 throughput.
MODELS = [
    ('bert_models', 'bert-base', 114.5917, 279.8795, 83.8895, 382.0673),
    ('bert_models', 'bert-large', 307.9359, 103.9488, 206.8114, 154.8409),
    ('densenet_models', 'densenet169', 150.6416, 212.4702, 145.3082, 220.2932),
    ('densenet_models', 'densenet201', 182.9112, 174.9742, 176.3489, 181.5447),
    ('gpt_models', 'gpt2-large', 295.0527, 27.1155, 194.4958, 41.1394),
    ('lstm_models', 'lstm', 48.0702, 4806.4724, 25.9531, 9069.9081),
    ('resnet_models', 'resnet50', 253.9552, 760.3348, 200.0861, 971.0651),
    ('resnet_models', 'resnet101', 389.0861, 496.1175, 308.6274, 627.2056),
    ('resnet_models', 'resnet152', 547.6558, 352.071, 424.581, 454.8336),
    ('vgg_models', 'vgg11', 40.3528, 796.3616, 24.1335, 1330.4114),
    ('vgg_models', 'vgg13', 55.4663, 580.2341, 33.3523, 962.5332),
    ('vgg_models', 'vgg16', 65.2252, 493.4269, 39.2529, 817.2009),
    ('vgg_models', 'vgg19', 74.9349, 429.8092, 45.2033, 709.1127),
]
MODEL_CV = 0.5          # assumed
MODEL_COMPUTE = 0.8     # assumed: share of a step gated by the slowest GPU's compute

# cuBLAS configurations (function, params, flop multiplier, dtype); times assumed from the FLOP
# count at a share of the GEMM figures plus a 6 us launch floor.
CUBLAS = [
    ('cublasSgemm', [('m', 1024), ('n', 256), ('k', 1024), ('transa', 1), ('transb', 0)], 'FP32'),
    ('cublasSgemm', [('m', 4096), ('n', 1024), ('k', 1024), ('transa', 0), ('transb', 0)], 'FP32'),
    ('cublasSgemm', [('m', 1024), ('n', 4096), ('k', 4096), ('transa', 0), ('transb', 1)], 'FP32'),
    ('cublasSgemmStridedBatched', [('batch', 64), ('m', 224), ('n', 224), ('k', 64), ('transa', 0), ('transb', 1)], 'FP32'),
    ('cublasSgemmStridedBatched', [('batch', 160), ('m', 512), ('n', 512), ('k', 64), ('transa', 1), ('transb', 0)], 'FP32'),
    ('cublasGemmEx', [('datatype', 'half'), ('m', 1024), ('n', 4096), ('k', 1024), ('transa', 0), ('transb', 0), ('use_tensor_core', 'true')], 'FP16_TC'),
    ('cublasGemmEx', [('datatype', 'half'), ('m', 4096), ('n', 4096), ('k', 4096), ('transa', 1), ('transb', 0), ('use_tensor_core', 'true')], 'FP16_TC'),
    ('cublasGemmEx', [('datatype', 'float'), ('m', 4096), ('n', 1024), ('k', 4096), ('transa', 0), ('transb', 0), ('use_tensor_core', 'false')], 'FP32'),
    ('cublasGemmStridedBatchedEx', [('batch', 48), ('datatype', 'half'), ('m', 512), ('n', 512), ('k', 64), ('transa', 1), ('transb', 0), ('use_tensor_core', 'true')], 'FP16_TC'),
    ('cublasGemmStridedBatchedEx', [('batch', 192), ('datatype', 'half'), ('m', 224), ('n', 224), ('k', 64), ('transa', 0), ('transb', 1), ('use_tensor_core', 'true')], 'FP16_TC'),
    ('cublasCgemm', [('m', 512), ('n', 512), ('k', 32), ('transa', 1), ('transb', 0)], 'C'),
    ('cublasCgemm', [('m', 2048), ('n', 512), ('k', 32), ('transa', 1), ('transb', 0)], 'C'),
    ('cublasCgemm3mStridedBatched', [('batch', 544), ('m', 64), ('n', 32), ('k', 128), ('transa', 1), ('transb', 0)], 'C'),
    ('cublasCgemm3mStridedBatched', [('batch', 544), ('m', 128), ('n', 128), ('k', 64), ('transa', 0), ('transb', 0)], 'C'),
]
# cuDNN configurations: function, algo, input dims, filter dims, input type (0 float, 2 half).
CUDNN = [
    ('cudnnConvolutionForward', 0, (32, 128, 14, 14), (32, 128, 3, 3), 0),
    ('cudnnConvolutionForward', 1, (32, 256, 28, 28), (256, 256, 3, 3), 2),
    ('cudnnConvolutionForward', 1, (32, 64, 56, 56), (64, 64, 1, 1), 2),
    ('cudnnConvolutionForward', 0, (32, 512, 7, 7), (512, 512, 3, 3), 0),
    ('cudnnConvolutionBackwardData', 0, (32, 128, 14, 14), (32, 128, 3, 3), 0),
    ('cudnnConvolutionBackwardData', 1, (32, 256, 28, 28), (256, 256, 3, 3), 2),
    ('cudnnConvolutionBackwardData', 1, (32, 64, 56, 56), (64, 64, 1, 1), 2),
    ('cudnnConvolutionBackwardFilter', 0, (32, 128, 14, 14), (32, 128, 3, 3), 0),
    ('cudnnConvolutionBackwardFilter', 1, (32, 256, 28, 28), (256, 256, 3, 3), 2),
    ('cudnnConvolutionBackwardFilter', 1, (32, 512, 7, 7), (512, 512, 3, 3), 2),
]
FUNC_CV = 0.5  # assumed, cuBLAS/cuDNN mean time over a run

# sb-test: SuperBench's fio test output (4 KiB random read/write): iops and latency percentiles (ns).
DISK = {'read_iops': 85138.890741, 'write_iops': 85066.128925,
        'lat_ns_95': 1941504.0, 'lat_ns_99': 2244608.0, 'lat_ns_99.9': 3620864.0}
DISK_CV_IOPS, DISK_CV_LAT = 3.0, 5.0  # assumed

CPU_BW = {'local': 65000.0, 'socket': 55000.0, 'remote': 30000.0}  # assumed, MB/s
CPU_LAT = {'local': 95.0, 'socket': 110.0, 'remote': 200.0}         # assumed, ns
CPU_MAX = [('all_reads', 280000.0), ('3_1_reads-writes', 250000.0), ('2_1_reads-writes', 245000.0),
           ('1_1_reads-writes', 230000.0), ('stream-triad_like', 240000.0)]
CPU_CV = 1.0

P2P_A100, P2P_H100 = 265.0, 390.0   # assumed, GB/s one direction, one GPU pair over NVSwitch
P2P_CV = 0.5

CLASSES = {
    'a100': {'disks': 4, 'scale': 1.0, 'pcie': 1.0, 'hbm': 1.0, 'ib': 1.0, 'p2p': P2P_A100},
    'h100': {'disks': 8, 'scale': 2.2, 'pcie': 2.05, 'hbm': 3350 / 1555, 'ib': IB_H100_RATIO,
             'p2p': P2P_H100},
}

NAMINGS = ['v02', 'v04', 'current']
REGIMES = ['clean', 'correlated', 'rounded', 'heavy', 'moderate', 'mixed', 'firmware', 'two-classes',
           'messy', 'all']
KINDS = ['slow_gpu', 'slow_hbm', 'slow_pcie', 'slow_nic', 'slow_nvlink', 'slow_disk', 'kernel_launch']
NGPU = 8
NHCA = 8


# ----------------------------------------------------------------------------------------------
# Layout: every metric of one node class under one naming generation.
# ----------------------------------------------------------------------------------------------

class M:
    """One metric key. q: quantity; comp: (kind, index); ofs: shared-offset groups; prec: rounding."""
    __slots__ = ('key', 'bench', 'q', 'base', 'hib', 'cv', 'comp', 'gpu', 'hca', 'pair', 'disk',
                 'size', 'prec', 'sens', 'rank', 'derive', 'group')

    def __init__(self, key, bench, q, base, hib, cv, comp, prec='full', **kw):
        self.key, self.bench, self.q, self.base, self.hib, self.cv = key, bench, q, base, hib, cv
        self.comp, self.prec = comp, prec
        self.gpu = kw.get('gpu')
        self.hca = kw.get('hca')
        self.pair = kw.get('pair')
        self.disk = kw.get('disk')
        self.size = kw.get('size')
        self.sens = kw.get('sens', 1.0)
        self.rank = kw.get('rank')
        self.derive = kw.get('derive')   # ('nccl', size, 'busbw'|'algbw') or ('model', name, k)
        self.group = kw.get('group')


def _gpu_type_lower(t):
    return t.lower() + ('_iops' if t.startswith('INT') else '_flops')


def _cublas_key(fn, params, naming):
    if naming == 'v02':
        return 'name_' + fn + ''.join('_%s_%s' % (k, v) for k, v in params)
    return ('name_' + fn + ''.join('_%s_%s' % (k, v) for k, v in params)).lower() + '_time'


def _cudnn_key(cfg, naming):
    fn, algo, idims, fdims, itype = cfg
    s = 'name_%s_algo_%d_inputDims_%s_filterDims_%s_inputType_%d_convType_0_mode_1' % (
        fn, algo, '_'.join(map(str, idims)), '_'.join(map(str, fdims)), itype)
    return s if naming == 'v02' else s.lower() + '_time'


def _cublas_base(params, kind, cls):
    p = dict(params)
    flops = 2.0 * p['m'] * p['n'] * p['k'] * p.get('batch', 1) * (4 if kind == 'C' else 1)
    rate = {'FP32': GEMM_A100['FP32'][0] * 0.8, 'FP16_TC': GEMM_A100['FP16_TC'][0] * 0.55,
            'C': GEMM_A100['FP32'][0] * 0.7}[kind] * 1e9 * cls['scale']
    return 6.0 + flops / rate * 1e6


def _cudnn_base(cfg, cls):
    fn, algo, idims, fdims, itype = cfg
    n, c, h, w = idims
    flops = 2.0 * n * fdims[0] * h * w * c * fdims[2] * fdims[3]
    rate = (GEMM_A100['FP16_TC'][0] * 0.35 if itype == 2 else GEMM_A100['FP32'][0] * 0.7) * 1e9
    rate *= cls['scale'] * (0.8 if 'Backward' in fn else 1.0)
    return (8.0 + flops / rate * 1e6) / 1000.0  # ms, as SuperBench's cudnn-function reports


def numa_of(g):
    return g // 2  # config.yaml: numactl -N $((proc_rank/2)), 4 NUMA nodes with 2 GPUs each


def build_layout(naming, cname):
    cls = CLASSES[cname]
    L = []
    h100 = cname == 'h100'

    def rc(bench):
        L.append(M(bench + '/return_code', bench, 'rc', 0, False, 0.0, ('node', ''), prec='int'))

    # gemm-flops
    for t in GEMM_TYPES:
        if h100 and t == 'INT4_TC':
            continue
        base, cv = GEMM_A100[t]
        if h100:
            base *= GEMM_H100_RATIO[t]
        sens = 1.0 if t.endswith('_TC') and t != 'FP64_TC' else 0.35
        for g in range(NGPU):
            key = 'gemm-flops/%s:%d' % (t if naming == 'v02' else _gpu_type_lower(t), g)
            L.append(M(key, 'gemm-flops', 'gemm', base, True, cv, ('gpu', str(g)), 'sig6',
                       gpu=g, sens=sens))
    rc('gemm-flops')
    # kernel-launch
    for what in ('event', 'wall'):
        base, cv = KL_A100[what]
        base *= 0.9 if h100 else 1.0
        for g in range(NGPU):
            name = what + ('_overhead' if naming == 'v02' else '_time')
            L.append(M('kernel-launch/%s:%d' % (name, g), 'kernel-launch', 'kl', base, False, cv,
                       ('gpu', str(g)), 'dec5', gpu=g))
    rc('kernel-launch')
    # ib-loopback
    for h in range(NHCA):
        for s in IB_SIZES:
            base, cv = IB_A100[s]
            if h100:
                base *= cls['ib'] if s >= IB_LARGE else 1.0 + (cls['ib'] - 1.0) * 0.5
            if naming == 'v02':
                key = 'ib-loopback/IB_write_%d_Avg_%d:0' % (s, h)
            else:
                base /= 1000.0  # GB/s
                key = ('ib-loopback/ib_write_%d_ib%d_bw:%d' % (s, h, h // 2) if naming == 'v04'
                       else 'ib-loopback/ib_write_bw_%d:%d' % (s, h))
            L.append(M(key, 'ib-loopback', 'ib', base, True, cv, ('nic', str(h)), 'dec2',
                       hca=h, size=s))
    rc('ib-loopback')
    # nccl-bw: the time is generated, the bandwidths derived from it.
    sfx = ':0' if naming == 'v02' else ''
    for s in NCCL_SIZES:
        t = NCCL_TIME_A100[s]
        frac = nccl_frac(s)
        if h100:
            t *= 0.9 + (NCCL_H100_LARGE - 0.9) * frac
        cv = 2.0 - 1.5 * frac  # assumed: 2% latency-bound, 0.5% bandwidth-bound
        L.append(M('nccl-bw/allreduce_%d_busbw%s' % (s, sfx), 'nccl-bw', 'nccl', 0, True, 0,
                   ('node', ''), 'dec2', size=s, derive=('nccl', s, 'busbw')))
        L.append(M('nccl-bw/allreduce_%d_algbw%s' % (s, sfx), 'nccl-bw', 'nccl', 0, True, 0,
                   ('node', ''), 'dec2', size=s, derive=('nccl', s, 'algbw')))
        L.append(M('nccl-bw/allreduce_%d_time%s' % (s, sfx), 'nccl-bw', 'nccl', t, False, cv,
                   ('node', ''), 'nccltime', size=s))
    rc('nccl-bw')
    # mem-bw
    for what in ('h2d', 'd2h', 'd2d'):
        base, cv = MEMBW_A100[what]
        base *= cls['hbm'] if what == 'd2d' else cls['pcie']
        comp = 'hbm' if what == 'd2d' else 'pcie'
        for g in range(NGPU):
            key = ('mem-bw/%s_Mem_BW:%d' % (what.upper(), g) if naming == 'v02'
                   else 'mem-bw/%s_bw:%d' % (what, g))
            L.append(M(key, 'mem-bw', what, base, True, cv, (comp, str(g)), 'dec1', gpu=g))
    rc('mem-bw')
    # gpu-sm-copy-bw (v02) or gpu-copy-bw (v04, current)
    if naming == 'v02':
        for what in ('dtoh', 'htod'):
            for i in range(4 * NGPU):
                g = i % NGPU
                base = SMCOPY_A100[what][g] * cls['pcie']
                L.append(M('gpu-sm-copy-bw/%s:%d' % (what, i), 'gpu-sm-copy-bw', 'smcopy', base,
                           True, SMCOPY_CV, ('pcie', str(g)), 'sig6', gpu=g))
        rc('gpu-sm-copy-bw')
    else:
        b = 'gpu-copy-bw'
        for g in range(NGPU):
            n = numa_of(g)
            if naming == 'v04':
                k1 = 'cpu_to_gpu%d_by_gpu%d_using_dma_under_numa%d_bw' % (g, g, n)
                k2 = 'gpu%d_to_cpu_by_gpu%d_using_dma_under_numa%d_bw' % (g, g, n)
                k3 = 'gpu%d_to_gpu%d_by_gpu%d_using_sm_under_numa%d_bw' % (g, g, g, n)
            else:
                k1 = 'cpu_to_gpu%d_by_dma_under_numa%d_bw' % (g, n)
                k2 = 'gpu%d_to_cpu_by_dma_under_numa%d_bw' % (g, n)
                k3 = 'gpu%d_to_gpu%d_by_sm_bw' % (g, g)
            L.append(M(b + '/' + k1, b, 'h2d', MEMBW_A100['h2d'][0] * 1.01 * cls['pcie'], True,
                       0.8, ('pcie', str(g)), 'sig6', gpu=g))
            L.append(M(b + '/' + k2, b, 'd2h', MEMBW_A100['d2h'][0] * 1.01 * cls['pcie'], True,
                       0.8, ('pcie', str(g)), 'sig6', gpu=g))
            L.append(M(b + '/' + k3, b, 'd2d', MEMBW_A100['d2d'][0] * 1.12 * cls['hbm'], True,
                       0.4, ('hbm', str(g)), 'sig6', gpu=g))
        for i in range(NGPU):
            for j in range(NGPU):
                if i == j:
                    continue
                pair = (min(i, j), max(i, j))
                comp = ('nvlink', '%d-%d' % pair)
                if naming == 'v04':
                    ks = ['gpu%d_to_gpu%d_by_gpu%d_using_sm_under_numa%d_bw' % (i, j, i, numa_of(i))]
                else:
                    ks = ['gpu%d_to_gpu%d_write_by_sm_bw' % (i, j), 'gpu%d_to_gpu%d_read_by_sm_bw' % (i, j)]
                for k in ks:
                    base = cls['p2p'] * (0.97 if 'read' in k else 1.0)
                    L.append(M(b + '/' + k, b, 'p2p', base, True, P2P_CV, comp, 'sig6', pair=pair))
        rc(b)
    # cublas-function / cudnn-function, per rank
    for fn, params, kind in CUBLAS:
        base = _cublas_base(params, kind, cls)
        for g in range(NGPU):
            L.append(M('cublas-function/%s:%d' % (_cublas_key(fn, params, naming), g),
                       'cublas-function', 'func', base, False, FUNC_CV, ('gpu', str(g)), 'full',
                       gpu=g, sens=0.5 if kind == 'FP32' or kind == 'C' else 1.0))
    rc('cublas-function')
    for cfg in CUDNN:
        base = _cudnn_base(cfg, cls)
        for g in range(NGPU):
            L.append(M('cudnn-function/%s:%d' % (_cudnn_key(cfg, naming), g), 'cudnn-function',
                       'func', base, False, FUNC_CV, ('gpu', str(g)), 'full', gpu=g,
                       sens=1.0 if cfg[4] == 2 else 0.5))
    rc('cudnn-function')
    # disk-benchmark, per block device
    pct = {'95': '95.000000', '99': '99.000000', '99.9': '99.900000'} if naming == 'v02' else \
          {'95': '95.0', '99': '99.0', '99.9': '99.9'}
    for d in range(cls['disks']):
        pre = 'disk-benchmark/nvme%dn1_rand_read_write' % d
        comp = ('disk', str(d))
        L.append(M(pre + '_bs', 'disk-benchmark', 'diskbs', 4096.0, None, 0.0, comp, 'int', disk=d))
        for io in ('read', 'write'):
            L.append(M('%s_%s_iops' % (pre, io), 'disk-benchmark', 'disk', DISK[io + '_iops'],
                       True, DISK_CV_IOPS, comp, 'dec6', disk=d))
            for p in ('95', '99', '99.9'):
                L.append(M('%s_%s_lat_ns_%s' % (pre, io, pct[p]), 'disk-benchmark', 'disk',
                           DISK['lat_ns_' + p] * (1.02 if io == 'write' else 1.0), False,
                           DISK_CV_LAT, comp, 'int', disk=d))
    rc('disk-benchmark')
    # cpu-memory-bw-latency (v0.4 on)
    if naming != 'v02':
        b = 'cpu-memory-bw-latency'
        for i in range(4):
            for j in range(4):
                rel = 'local' if i == j else ('socket' if i // 2 == j // 2 else 'remote')
                L.append(M('%s/mem_bandwidth_matrix_numa_%d_%d_bw' % (b, i, j), b, 'cpu',
                           CPU_BW[rel], True, CPU_CV, ('cpu', ''), 'dec1'))
                L.append(M('%s/mem_bandwidth_matrix_numa_%d_%d_lat' % (b, i, j), b, 'cpu',
                           CPU_LAT[rel], False, CPU_CV, ('cpu', ''), 'dec1'))
        for name, v in CPU_MAX:
            L.append(M('%s/mem_max_bandwidth_%s_bw' % (b, name), b, 'cpu', v, True, CPU_CV,
                       ('cpu', ''), 'dec1'))
        rc(b)
    # computation-communication overlap: synchronous ranks, so node-level in effect
    b = 'pytorch-computation-communication-overlap'
    for what, base, cv in (('mul', 44.0493, 0.232), ('matmul', 137.048, 0.05)):
        for g in range(NGPU):
            key = '%s/%s_%s:%d' % (b, what, 'cost' if naming == 'v02' else 'time', g)
            L.append(M(key, b, 'overlap_' + what, base / cls['scale'], False, cv, ('node', ''),
                       'full', rank=g))
    rc(b)
    b = 'pytorch-sharding-matmul'
    for what, base in (('allreduce', 10.5744), ('allgather', 10.0847)):
        key = '%s/%s%s' % (b, what, '' if naming == 'v02' else '_time')
        L.append(M(key, b, 'sharding', base / cls['scale'], False, 0.5, ('node', ''), 'full'))
    rc(b)
    b = 'pytorch-matmul'
    L.append(M('%s/nosharding%s' % (b, '' if naming == 'v02' else '_time'), b, 'matmul',
               34.645 / cls['scale'], False, 0.5, ('gpu', '0'), 'full', gpu=0))
    rc(b)
    # model benchmarks: step time generated, throughput derived
    for grp, model, s32, t32, s16, t16 in MODELS:
        b = '%s/pytorch-%s' % (grp, model)
        for prec, st, tp in (('fp32', s32, t32), ('fp16', s16, t16)):
            sc = cls['scale'] * (0.9 if prec == 'fp32' else 1.1) if h100 else 1.0
            if naming == 'v02':
                ks, kt = 'steptime_train_float%s' % prec[2:], 'throughput_train_float%s' % prec[2:]
            else:
                ks, kt = '%s_train_step_time' % prec, '%s_train_throughput' % prec
            L.append(M(b + '/' + ks, b, 'model', st / sc, False, MODEL_CV, ('node', ''), 'full',
                       group=b + prec))
            L.append(M(b + '/' + kt, b, 'model', 0, True, 0, ('node', ''), 'full',
                       derive=('model', b + '/' + ks, st * tp)))
        rc(b)
    return L


def nccl_frac(s):
    """0 for latency-bound sizes (<= 64 KiB), 1 for bandwidth-bound ones (>= 64 MiB)."""
    return min(1.0, max(0.0, (math.log2(s) - 16) / 10.0))


def extra_layout(naming):
    """gpu-burn: a whole extra benchmark a few nodes ran (regime messy)."""
    L = [M('gpu-burn/time', 'gpu-burn', 'burn', 300.0, None, 0.0, ('node', ''), 'int')]
    for g in range(NGPU):
        L.append(M('gpu-burn/gpu_%d_pass' % g, 'gpu-burn', 'burn', 1, True, 0.0, ('gpu', str(g)), 'int'))
    L.append(M('gpu-burn/abort', 'gpu-burn', 'burn', 0, False, 0.0, ('node', ''), 'int'))
    L.append(M('gpu-burn/return_code', 'gpu-burn', 'rc', 0, False, 0.0, ('node', ''), 'int'))
    return L


# ----------------------------------------------------------------------------------------------
# Key classification (the naming table in code): component, index and direction of any key of
# any generation. Used by reference_rules.py.
# ----------------------------------------------------------------------------------------------

_HIGH = {'bw', 'BW', 'flops', 'iops', 'throughput', 'busbw', 'algbw', 'pass', 'Avg'}
_LOW = {'time', 'lat', 'overhead', 'cost', 'steptime', 'abort'}
_CLS = [
    (re.compile(r'^gemm-flops/.*:(\d+)$'), 'gpu'),
    (re.compile(r'^kernel-launch/.*:(\d+)$'), 'gpu'),
    (re.compile(r'^cublas-function/.*:(\d+)$'), 'gpu'),
    (re.compile(r'^cudnn-function/.*:(\d+)$'), 'gpu'),
    (re.compile(r'^gpu-burn/gpu_(\d+)_pass$'), 'gpu'),
    (re.compile(r'^ib-loopback/IB_\w+?_\d+_Avg_(\d+)(?::\d+)?$'), 'nic'),
    (re.compile(r'^ib-loopback/ib_\w+?_\d+_ib(\d+)_bw(?::\d+)?$'), 'nic'),
    (re.compile(r'^ib-loopback/ib_\w+_bw_\d+:(\d+)$'), 'nic'),
    (re.compile(r'^mem-bw/(?:H2D|D2H|h2d|d2h)\w*:(\d+)$'), 'pcie'),
    (re.compile(r'^mem-bw/(?:D2D|d2d)\w*:(\d+)$'), 'hbm'),
    (re.compile(r'^gpu-copy-bw/cpu_to_gpu(\d+)_'), 'pcie'),
    (re.compile(r'^gpu-copy-bw/gpu(\d+)_to_cpu_'), 'pcie'),
    (re.compile(r'^disk-benchmark/nvme(\d+)n\d+_'), 'disk'),
    (re.compile(r'^pytorch-matmul/'), 'gpu0'),
    (re.compile(r'^cpu-memory-bw-latency/'), 'cpu'),
]
_SMCOPY = re.compile(r'^gpu-sm-copy-bw/\w+:(\d+)$')
_P2P = re.compile(r'^gpu-copy-bw/gpu(\d+)_to_gpu(\d+)_')


def classify(key):
    """(component kind, index, direction): +1 higher is better, -1 lower is better, 0 neither."""
    bench, _, metric = key.partition('/')
    metric = metric.split(':')[0]
    if metric == 'return_code' or key.endswith('/return_code'):
        return 'node', '', -1
    toks = set(re.split(r'[_/]', key.split(':')[0]))
    if toks & _LOW:
        d = -1
    elif toks & _HIGH:
        d = 1
    elif bench in ('gemm-flops', 'gpu-sm-copy-bw', 'ib-loopback', 'mem-bw', 'gpu-copy-bw'):
        d = 1
    elif bench in ('pytorch-sharding-matmul', 'pytorch-matmul', 'cublas-function',
                   'cudnn-function'):
        d = -1
    else:
        d = 0
    m = _SMCOPY.match(key)
    if m:
        return 'pcie', str(int(m.group(1)) % NGPU), d
    m = _P2P.match(key)
    if m:
        i, j = int(m.group(1)), int(m.group(2))
        if i == j:
            return 'hbm', str(i), d
        return 'nvlink', '%d-%d' % (min(i, j), max(i, j)), d
    for rx, kind in _CLS:
        m = rx.match(key)
        if m:
            if kind == 'gpu0':
                return 'gpu', '0', d
            if kind == 'cpu':
                return 'cpu', '', d
            return kind, m.group(1), d
    return 'node', '', d


# ----------------------------------------------------------------------------------------------
# Printing, as SuperBench prints each quantity (regimes rounded and all).
# ----------------------------------------------------------------------------------------------

def fmt(v, prec, rounded):
    if prec == 'int':
        return float(round(v)) if not isinstance(v, int) else v
    if not rounded:
        return v
    if prec == 'dec1':
        return round(v, 1)
    if prec == 'dec2':
        return round(v, 2)
    if prec == 'dec5':
        return round(v, 5)
    if prec == 'dec6':
        return round(v, 6)
    if prec == 'sig6':
        if v == 0:
            return 0.0
        return round(v, 5 - int(math.floor(math.log10(abs(v)))))
    if prec == 'nccltime':  # nccl-tests: 2 decimals below 100 us, 1 below 10 ms, 0 above
        return round(v, 2) if v < 100 else (round(v, 1) if v < 10000 else float(round(v)))
    return v


# ----------------------------------------------------------------------------------------------
# Fleet generation
# ----------------------------------------------------------------------------------------------

class Regime:
    def __init__(self, name):
        a = name == 'all'
        self.name = name
        self.correlated = a or name == 'correlated'
        self.rounded = a or name == 'rounded'
        self.heavy = a or name == 'heavy'
        # A tail a little heavier than a normal's (not part of `all`, which keeps its noise): a few
        # thousand values cannot tell it from a normal, where a learner that bets on the normal
        # flags many times its budget.
        self.moderate = name == 'moderate'
        # Tails of two shapes in one fleet: latencies that interference stretches (kernel launch
        # times, fio's latency percentiles) a Student t of 3, everything else normal (not part of
        # `all` either): a learner that pools the shape of its tests' tails across the class pulls
        # the few heavy ones toward the normal.
        self.mixed = name == 'mixed'
        self.firmware = a or name == 'firmware'
        self.two_classes = a or name == 'two-classes'
        self.messy = a or name == 'messy'


def student_t(rng, nu):
    """Student-t with nu (> 2) degrees of freedom scaled to unit variance."""
    z = rng.gauss(0.0, 1.0)
    c = sum(rng.gauss(0.0, 1.0) ** 2 for _ in range(nu))
    return z / math.sqrt(c / nu) / math.sqrt(nu / (nu - 2.0))


def worse(v, hib, f):
    """f: fraction worse (0.05 = 5%). Higher-is-better falls by f, lower-is-better rises by f."""
    return v * (1.0 - f) if hib else v * (1.0 + f)


FAIL_BENCH = {'slow_gpu': 'gemm-flops', 'slow_hbm': 'mem-bw', 'slow_pcie': 'mem-bw',
              'slow_nic': 'ib-loopback', 'slow_nvlink': 'gpu-copy-bw',
              'slow_disk': 'disk-benchmark', 'kernel_launch': 'kernel-launch'}


def defect_effects(d, layout):
    """{key: fraction worse} for defect d on a node with this layout, or the keys a failed
    benchmark loses (d['fail'])."""
    kind, f = d['defect'], d['f']
    idx = d['index']
    eff = {}
    for m in layout:
        if m.q == 'rc':
            continue
        if kind == 'slow_gpu':
            g = int(idx)
            if m.q in ('gemm', 'func') and m.gpu == g:
                eff[m.key] = f
            elif m.q == 'model' and m.hib is False:
                eff[m.key] = f * MODEL_COMPUTE
            elif m.q == 'overlap_matmul':
                eff[m.key] = f * 0.9
            elif m.q == 'overlap_mul':
                eff[m.key] = f * 0.3
            elif m.q == 'sharding':
                eff[m.key] = f * 0.8
            elif m.q == 'matmul' and g == 0:
                eff[m.key] = f
        elif kind == 'slow_hbm':
            if m.q == 'd2d' and m.gpu == int(idx):
                eff[m.key] = f
        elif kind == 'slow_pcie':
            if m.q in ('h2d', 'd2h', 'smcopy') and m.gpu == int(idx):
                eff[m.key] = f
        elif kind == 'slow_nic':
            if m.q == 'ib' and m.hca == int(idx) and (not d['large_only'] or m.size >= IB_LARGE):
                eff[m.key] = f
        elif kind == 'slow_nvlink':
            if m.q == 'p2p' and '%d-%d' % m.pair == idx:
                eff[m.key] = f
            elif m.q == 'nccl' and m.derive is None and nccl_frac(m.size) > 0:
                eff[m.key] = f * nccl_frac(m.size)
        elif kind == 'slow_disk':
            if m.q == 'disk' and m.disk == int(idx):
                eff[m.key] = f
        elif kind == 'kernel_launch':
            if m.q == 'kl' and m.gpu == int(idx):
                eff[m.key] = f
    return eff


def fail_keys(d, layout):
    kind, idx = d['defect'], d['index']
    b = FAIL_BENCH[kind]
    out = []
    for m in layout:
        if m.bench != b or m.q == 'rc':
            continue
        ck, ci, _ = classify(m.key)
        if kind in ('slow_gpu', 'kernel_launch'):
            ok = ck == 'gpu' and ci == idx
        elif kind == 'slow_hbm':
            ok = ck == 'hbm' and ci == idx
        elif kind == 'slow_pcie':
            ok = ck == 'pcie' and ci == idx
        elif kind == 'slow_nic':
            ok = ck == 'nic' and ci == idx
        elif kind == 'slow_nvlink':
            ok = ck == 'nvlink' and ci == idx
        else:
            ok = ck == 'disk' and ci == idx
        if ok:
            out.append(m.key)
    return b, out


def node_values(rng, layout, reg, st, defect, eff, drop_bench, fail_bench):
    """One result line of one node. st: the node's latent state (offsets, noise level, mode)."""
    out = {}
    nccl_time = {}
    model_step = {}
    derived = []
    nl = st['noise']
    for m in layout:
        if m.bench in drop_bench:
            continue
        if m.q == 'rc':
            out[m.key] = 1 if m.bench in fail_bench else 0
            continue
        if m.bench in fail_bench and m.key in fail_bench[m.bench]:
            continue
        if m.derive:
            out[m.key] = None  # filled below, once what it derives from is drawn
            derived.append(m)
            continue
        if m.cv == 0.0:
            out[m.key] = fmt(m.base, m.prec, reg.rounded)
            continue
        cv = m.cv / 100.0
        stretched = reg.mixed and (m.bench == 'kernel-launch' or '_lat_ns_' in m.key)
        if reg.heavy or reg.moderate or stretched:
            e = student_t(rng, 8 if reg.moderate else 3)
        else:
            e = rng.gauss(0.0, 1.0)
        x = 0.0
        if reg.correlated:
            # Shared offsets carry most of the spread; the residual is half the clean one.
            x += st['ofs_' + m.q](m) if ('ofs_' + m.q) in st else 0.0
            cv *= 0.5
        v = m.base * (1.0 + x + e * cv * nl)
        if st['mode'] == 'fw-b':
            v = worse(v, m.hib, st['fw'](m))
        if m.key in eff:
            v = worse(v, m.hib, eff[m.key])
        if v <= 0:
            v = m.base * 0.01
        if m.q == 'nccl':
            nccl_time[m.size] = v
        if m.q == 'model':
            model_step[m.key] = v
        out[m.key] = fmt(v, m.prec, reg.rounded)
    for m in derived:
        if m.derive[0] == 'nccl':
            s = m.derive[1]
            if s not in nccl_time:
                del out[m.key]
                continue
            alg = s / (nccl_time[s] * 1e3)
            v = alg * NCCL_BUS if m.derive[2] == 'busbw' else alg
        else:
            if m.derive[1] not in model_step:
                del out[m.key]
                continue
            v = m.derive[2] / model_step[m.derive[1]]
        out[m.key] = fmt(v, m.prec, reg.rounded)
    return out


def make_state(rng, reg, cls_name, fw_group, mode):
    st = {'noise': 1.0, 'mode': mode}
    if reg.heavy:
        u = rng.random()
        st['noise'] = 3.0 if u < 0.05 else (2.0 if u < 0.20 else 1.0)
    if reg.correlated:
        node = rng.gauss(0.0, 0.003)          # node-wide clock/power offset (assumed 0.3%)
        gpu = [rng.gauss(0.0, 0.006) for _ in range(NGPU)]   # 0.6% on tensor-core GEMM
        pcie = [rng.gauss(0.0, 0.008) for _ in range(NGPU)]
        hbm = [rng.gauss(0.0, 0.003) for _ in range(NGPU)]
        nic = [rng.gauss(0.0, 0.004) for _ in range(NHCA)]
        st['ofs_gemm'] = lambda m: node + gpu[m.gpu] * m.sens
        st['ofs_func'] = lambda m: -(node + gpu[m.gpu] * m.sens)
        st['ofs_h2d'] = lambda m: pcie[m.gpu]
        st['ofs_d2h'] = lambda m: pcie[m.gpu]
        st['ofs_smcopy'] = lambda m: pcie[m.gpu] * 0.5
        st['ofs_d2d'] = lambda m: hbm[m.gpu]
        st['ofs_ib'] = lambda m: nic[m.hca] * (1.0 if m.size >= IB_LARGE else 0.3)
    if mode == 'fw-b':
        if fw_group == 'nic':
            st['fw'] = lambda m: 0.03 if m.q == 'ib' and m.size >= 8192 else 0.0
        else:
            st['fw'] = lambda m: 0.025 if m.q in ('gemm', 'func') else 0.0
    return st


def generate(args):
    rng = random.Random(args.seed)
    reg = Regime(args.regime)
    n = args.nodes
    names = ['sb-node-%05d' % i for i in range(n)]
    layouts = {c: build_layout(args.naming, c) for c in CLASSES}
    extra = extra_layout(args.naming)

    # Classes: about 60% H100, 40% A100 in two-classes, all A100 otherwise.
    classes = ['a100'] * n
    if reg.two_classes:
        idx = list(range(n))
        rng.shuffle(idx)
        for i in idx[:int(round(0.6 * n))]:
            classes[i] = 'h100'
    # Firmware modes: 30% of nodes on fw-b.
    fw_group = rng.choice(['nic', 'gpu-clock']) if reg.firmware else None
    modes = ['fw-a'] * n
    if reg.firmware:
        for i in rng.sample(range(n), int(round(0.3 * n))):
            modes[i] = 'fw-b'
    # Defects.
    kinds = [k for k in KINDS if not (k == 'slow_nvlink' and args.naming == 'v02')]
    sizes = args.sizes
    ndef = int(round(args.defect_rate * n))
    defect_nodes = rng.sample(range(n), ndef)
    defects = {}
    for j, i in enumerate(defect_nodes):
        kind, size = kinds[j % len(kinds)], sizes[j % len(sizes)]
        if size == 'gross':
            f = rng.uniform(0.40, 0.90)
            fail = rng.random() < 0.5
        else:
            f = size / 100.0
            fail = False
        if kind in ('slow_gpu', 'slow_hbm', 'slow_pcie', 'kernel_launch'):
            index = str(rng.randrange(NGPU))
        elif kind == 'slow_nic':
            index = str(rng.randrange(NHCA))
        elif kind == 'slow_nvlink':
            a, b = rng.sample(range(NGPU), 2)
            index = '%d-%d' % (min(a, b), max(a, b))
        else:
            index = str(rng.randrange(CLASSES[classes[i]]['disks']))
        defects[i] = {'defect': kind, 'size_pct': None if size == 'gross' else size, 'f': f,
                      'fail': fail, 'index': index, 'large_only': kind == 'slow_nic' and rng.random() < 0.5}
    # Messy: missing benchmark, failed benchmark, extra benchmark on healthy nodes; re-tests on any.
    messy = {}
    retest = set()
    if reg.messy:
        healthy = [i for i in range(n) if i not in defects]
        pick = rng.sample(healthy, min(len(healthy), int(round(0.07 * n))))
        benches = ['mem-bw', 'ib-loopback', 'nccl-bw', 'disk-benchmark', 'cublas-function',
                   'gpu_models/pytorch-gpt2-large', 'kernel-launch']
        n3, n2 = int(round(0.03 * n)), int(round(0.02 * n))
        for j, i in enumerate(pick):
            if j < n3:
                messy[i] = ('missing', rng.choice(benches))
            elif j < n3 + n2:
                messy[i] = ('failed', rng.choice(benches))
            else:
                messy[i] = ('extra', 'gpu-burn')
        retest = set(rng.sample(range(n), int(round(0.02 * n))))

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, 'results-summary.jsonl'), 'w') as fr, \
            open(os.path.join(args.out, 'truth.jsonl'), 'w') as ft:
        for i in range(n):
            c = classes[i]
            layout = layouts[c]
            st = make_state(rng, reg, c, fw_group, modes[i])
            d = defects.get(i)
            eff, fails, truth_keys = {}, {}, []
            if d:
                if d['fail']:
                    b, ks = fail_keys(d, layout)
                    fails = {b: set(ks)}
                    truth_keys = ks + [b + '/return_code']
                else:
                    eff = defect_effects(d, layout)
                    truth_keys = [m.key for m in layout if m.key in eff]
                    # Derived keys move with what they are derived from.
                    for m in layout:
                        if m.derive and ((m.derive[0] == 'nccl' and any(
                                k in eff for k in ('nccl-bw/allreduce_%d_time' % m.derive[1],
                                                   'nccl-bw/allreduce_%d_time:0' % m.derive[1])))
                                or (m.derive[0] == 'model' and m.derive[1] in eff)):
                            truth_keys.append(m.key)
            drop, fail_b, lay = set(), dict(fails), layout
            mz = messy.get(i)
            if mz and mz[0] == 'missing':
                drop = {mz[1]}
            elif mz and mz[0] == 'failed':
                fail_b[mz[1]] = {m.key for m in layout if m.bench == mz[1]}
            elif mz and mz[0] == 'extra':
                lay = layout + extra
            if i in retest:
                # An older run: its own noise and, half the time, a failed benchmark.
                old_fail = dict(fail_b)
                if rng.random() < 0.5:
                    b = rng.choice(['nccl-bw', 'ib-loopback', 'mem-bw'])
                    old_fail[b] = {m.key for m in layout if m.bench == b}
                old = node_values(rng, lay, reg, st, d, eff, drop, old_fail)
                fr.write(json.dumps(dict([('node', names[i])] + list(old.items()))) + '\n')
            vals = node_values(rng, lay, reg, st, d, eff, drop, fail_b)
            fr.write(json.dumps(dict([('node', names[i])] + list(vals.items()))) + '\n')
            t = {'node': names[i]}
            if d:
                kind_c = {'slow_gpu': 'gpu', 'slow_hbm': 'hbm', 'slow_pcie': 'pcie',
                          'slow_nic': 'nic', 'slow_nvlink': 'nvlink', 'slow_disk': 'disk',
                          'kernel_launch': 'gpu'}[d['defect']]
                t.update({'healthy': False, 'defect': d['defect'], 'size_pct': d['size_pct'],
                          'component': {'kind': kind_c, 'index': d['index']},
                          'keys': truth_keys})
                if d['size_pct'] is None:
                    t['worse_pct'] = None if d['fail'] else round(d['f'] * 100, 1)
                    t['failed'] = d['fail']
                if d['defect'] == 'slow_nic':
                    t['large_sizes_only'] = d['large_only']
            else:
                t['healthy'] = True
            if st['noise'] > 1.0:  # defective nodes too: their small defects may hide in it
                t['noisy'] = True
                t['noise_x'] = st['noise']
            if reg.firmware:
                t['mode'] = modes[i]
            t['class'] = c
            if mz:
                t['messy'] = '%s:%s' % mz
            if i in retest:
                t['retested'] = True
            ft.write(json.dumps(t) + '\n')
    meta = {'generator': 'eval/fleetgen/fleetgen.py', 'nodes': n, 'seed': args.seed,
            'regime': args.regime, 'naming': args.naming, 'defect_rate': args.defect_rate,
            'sizes': args.sizes, 'defects': len(defects), 'firmware_group': fw_group,
            'keys_per_node': {c: len(layouts[c]) for c in sorted(set(classes))}}
    with open(os.path.join(args.out, 'meta.json'), 'w') as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write('\n')
    return meta


def parse_sizes(s):
    out = []
    for x in s.split(','):
        x = x.strip()
        if x == 'gross':
            out.append('gross')
        elif x.isdigit() and int(x) > 0:
            out.append(int(x))
        else:
            raise argparse.ArgumentTypeError('bad size %r (integers or "gross")' % x)
    if not out:
        raise argparse.ArgumentTypeError('no sizes')
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description='SuperBench fleet results with labelled defects.')
    p.add_argument('--nodes', type=int, required=True)
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--regime', choices=REGIMES, default='clean')
    p.add_argument('--naming', choices=NAMINGS, default='current')
    p.add_argument('--out', required=True)
    p.add_argument('--defect-rate', type=float, default=0.05)
    p.add_argument('--sizes', type=parse_sizes, default=parse_sizes('3,5,8,12,gross'))
    args = p.parse_args(argv)
    if args.nodes < 1:
        p.error('--nodes must be at least 1')
    if not 0.0 <= args.defect_rate <= 1.0:
        p.error('--defect-rate must be in [0, 1]')
    meta = generate(args)
    print('fleetgen: %d nodes, %d defects, regime %s, naming %s -> %s' % (
        meta['nodes'], meta['defects'], meta['regime'], meta['naming'], args.out))


if __name__ == '__main__':
    sys.exit(main())
