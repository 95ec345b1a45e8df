#!/usr/bin/env python3
"""Maintainer tool: draft shim/api/cudnn.api from the reference tables.

Never run by the build. It reads the tab-separated facts gathered about the
cuDNN 8.9 and 9.19 APIs (prototypes and enum values) and writes an API
description in this project's own vocabulary, with directions and array
counts guessed from the parameter names. The draft is then annotated by hand;
re-running it overwrites those annotations, so diff before committing.

usage: draft-from-tsv.py DIR_WITH_TSV > shim/api/cudnn.api
"""
import os
import re
import sys

# Counts that the parameter names make obvious: array name -> count name.
ARRAY_COUNTS = {
    "perfResults": "returnedAlgoCount",
    "dimA": "nbDims", "strideA": "nbDims", "filterDimA": "nbDims",
    "windowDimA": "nbDims", "paddingA": "nbDims",
    "padA": "arrayLength", "filterStrideA": "arrayLength", "dilationA": "arrayLength",
    "padBeforeA": "nbDims", "padAfterA": "nbDims", "foldA": "nbDims",
    "tensorOuputDimA": "nbDims", "outputTensorDimA": "nbDims",
    "axes": "nbDims",
}


# The kinds of the types the prototypes use; written by hand, kept here so that
# a re-draft keeps them.
TYPES = """\
# Types. handle: the library context; descriptor KIND: legacy and backend
# descriptors; object: other opaque things cuDNN creates; cuda: CUDA's opaque
# pointers; struct: passed by pointer only; value: a struct passed by value
# with the ABI of the named scalar; callback: a function pointer.
type handle cudnnHandle_t
type descriptor cudnnTensorDescriptor_t tensor
type descriptor cudnnFilterDescriptor_t filter
type descriptor cudnnConvolutionDescriptor_t convolution
type descriptor cudnnActivationDescriptor_t activation
type descriptor cudnnPoolingDescriptor_t pooling
type descriptor cudnnLRNDescriptor_t lrn
type descriptor cudnnDropoutDescriptor_t dropout
type descriptor cudnnRNNDescriptor_t rnn
type descriptor cudnnRNNDataDescriptor_t rnndata
type descriptor cudnnSeqDataDescriptor_t seqdata
type descriptor cudnnAttnDescriptor_t attn
type descriptor cudnnCTCLossDescriptor_t ctcloss
type descriptor cudnnOpTensorDescriptor_t optensor
type descriptor cudnnReduceTensorDescriptor_t reducetensor
type descriptor cudnnSpatialTransformerDescriptor_t spatialtransformer
type descriptor cudnnTensorTransformDescriptor_t tensortransform
type descriptor cudnnAlgorithmDescriptor_t algorithm
type descriptor cudnnBackendDescriptor_t backend
type object cudnnFusedOpsPlan_t
type object cudnnFusedOpsConstParamPack_t
type object cudnnFusedOpsVariantParamPack_t
type object cudnnPersistentRNNPlan_t
type object cudnnAlgorithmPerformance_t
type cuda cudaStream_t
type cuda cudaGraph_t
type value cudnnAlgorithm_t int
type callback cudnnCallback_t
type struct cudnnRuntimeTag_t
type struct cudnnDebug_t

struct cudnnConvolutionFwdAlgoPerf_t
\tcudnnConvolutionFwdAlgo_t algo
\tcudnnStatus_t status
\tfloat time
\tsize_t memory
\tcudnnDeterminism_t determinism
\tcudnnMathType_t mathType
\tint reserved[3]

struct cudnnConvolutionBwdDataAlgoPerf_t
\tcudnnConvolutionBwdDataAlgo_t algo
\tcudnnStatus_t status
\tfloat time
\tsize_t memory
\tcudnnDeterminism_t determinism
\tcudnnMathType_t mathType
\tint reserved[3]

struct cudnnConvolutionBwdFilterAlgoPerf_t
\tcudnnConvolutionBwdFilterAlgo_t algo
\tcudnnStatus_t status
\tfloat time
\tsize_t memory
\tcudnnDeterminism_t determinism
\tcudnnMathType_t mathType
\tint reserved[3]

# CUDA's library_types.h, used by cudnnGetProperty.
enum libraryPropertyType
\tMAJOR_VERSION = 0
\tMINOR_VERSION = 1
\tPATCH_LEVEL = 2
"""


# Functions that enqueue work on the handle's CUDA stream ("gpu"): a handle
# first and not a query or setter, with these exceptions either way.
GPU_NOT = {"cudnnDropoutGetStatesSize", "cudnnRNNGetClip", "cudnnRNNSetClip", "cudnnSaveAlgorithm"}
GPU_ALSO = {"cudnnBackendExecute", "cudnnSetTensor", "cudnnSetDropoutDescriptor"}
NOT_GPU_PREFIX = re.compile(r"cudnn(Get|Set|Create|Destroy|Query|Restore|Derive|Make|Build|Backend|Fused(?!OpsExecute))")


def enqueues(name, params):
    if name in GPU_ALSO:
        return True
    if name in GPU_NOT or not params.startswith("cudnnHandle_t"):
        return False
    return not NOT_GPU_PREFIX.match(name)


def rows(path):
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            yield line.rstrip("\n").split("\t")


def param_names(params):
    return [re.sub(r"\[\]$", "", p.strip()).split()[-1].lstrip("*") for p in params.split(", ")]


def param(text, fname, names=()):
    text = text.strip()
    is_array = text.endswith("[]")
    if is_array:
        text = text[:-2]
    m = re.match(r"^(.*?)([A-Za-z_][A-Za-z_0-9]*)$", text)
    ctype, name = m.group(1).strip(), m.group(2)
    ctype = ctype.replace("cudnnBackendDescriptor_t const", "const cudnnBackendDescriptor_t")
    base = ctype.replace("const ", "").strip()
    ptr = ctype.endswith("*") or is_array
    if base in ("void *",) or not ptr:
        direction = "in"
    elif ctype.startswith("const "):
        direction = "in"
    else:
        direction = "out"
    if is_array:
        count = ARRAY_COUNTS.get(name, "")
        if count and count not in names:
            alternatives = [c for c in ("nbDims", "arrayLength", "nbDimsRequested", "arrayLengthRequested")
                            if c in names]
            count = alternatives[0] if alternatives else ""
        if direction == "out" and name == "perfResults":
            count = "returnedAlgoCount"
        ctype = ctype + " *"
        return "%s %s[%s]" % (direction, decl(ctype, name), count)
    if name == "perfResults":
        return "%s %s[returnedAlgoCount]" % (direction, decl(ctype, name))
    return "%s %s" % (direction, decl(ctype, name))


def decl(ctype, name):
    ctype = re.sub(r"\s*\*", " *", ctype).strip()
    return ctype + name if ctype.endswith("*") else ctype + " " + name


def main():
    d = sys.argv[1]
    print("# cudnnspy API description: every public cuDNN 8.9.x and 9.x function, once.")
    print("# The single source for wrappers, tables, fakes and version scripts (see shim/gen/).")
    print("# Vocabulary: shim/api/README.md. Drafted by draft-from-tsv.py, then annotated by hand.")
    print()
    print(TYPES)
    e8 = {(r[0], r[1]): r[2] for r in rows(os.path.join(d, "cudnn-8.9-enums.tsv")) if r[0] != "enum"}
    e9 = {(r[0], r[1]): r[2] for r in rows(os.path.join(d, "cudnn-9.19-enums.tsv")) if r[0] != "enum"}
    order = []
    for k in list(e9) + list(e8):
        if k not in order:
            order.append(k)
    enums = {}
    for (e, n) in order:
        enums.setdefault(e, []).append(n)
    for e in sorted(enums):
        print("enum %s" % e)
        for n in enums[e]:
            v8, v9 = e8.get((e, n)), e9.get((e, n))
            if v8 is not None and v8 == v9:
                print("\t%s = %s" % (n, v9))
            else:
                if v8 is not None:
                    print("\t%s = %s @8" % (n, v8))
                if v9 is not None:
                    print("\t%s = %s @9" % (n, v9))
        print()
    for r in rows(os.path.join(d, "union-functions.tsv")):
        if r[0] == "name":
            continue
        name, ret, params, in8, in9 = r[0], r[1], r[2], r[3], r[4]
        lib = r[7].replace("libcudnn_", "").replace(".so.9", "") if r[7] not in ("-", "") else ""
        vers = []
        if in8 == "yes":
            vers.append("@8")
        if in9 in ("yes", "exported-only"):
            vers.append("@9")
        tags = " ".join(vers)
        if lib:
            tags += " lib=" + lib
        if r[9] == "yes" or (r[9] in ("-", "") and r[8] == "yes"):
            tags += " deprecated"
        if enqueues(name, params):
            tags += " gpu"
        if ret == "?":
            print("stub %s %s" % (name, tags))
            print()
            continue
        print("function %s %s %s" % (ret, name, tags))
        if params.strip() != "void":
            names = param_names(params)
            for p in params.split(", "):
                print("\t" + param(p, name, names))
        print()


if __name__ == "__main__":
    main()
