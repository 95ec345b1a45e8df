"""cuDNN's own API log as the oracle for the spy's records.

cuDNN 9 prints every call it receives, with its arguments, when CUDNN_LOGLEVEL_DBG=3 (CUDNN_LOGDEST_DBG names
the file). read_log() parses that text; compare() aligns it call by call with the spy's `call` and `failure`
records of one process traced with CUDNNSPY_TRACE='*', and checks every argument, array, descriptor field and
status both sides show. Python standard library only.

What cuDNN's log does that is not a disagreement (QUIRKS, each with its reason) is listed below; anything else
is a mismatch.
"""
import json
import re

# Functions cuDNN logs that the program did not call: cuDNN calling its own exported functions (which the spy
# counts as internal and does not record), the spy's own cudnnGetLastErrorString at each failure (it reads
# cuDNN's message for the record, and hands it to the program later), cuDNN's internal names for some entry
# points, and its visualizations of finalized configs.
LOG_ONLY = {
    "cudnnGetLastErrorString": "read by the spy at each failure",
    "cudnnGraphLibraryConfigInit": "cuDNN's own initialization",
    "cudnnOpsVersionCheck": "sub-library check inside cuDNN",
    "cudnnCnnVersionCheck": "sub-library check inside cuDNN",
    "cudnnAdvVersionCheck": "sub-library check inside cuDNN",
    "cudnnGraphVersionCheck": "sub-library check inside cuDNN",
    "cudnnGetVersion": "asked by cuDNN's sub-libraries, and by the spy when it resolves the library",
    "cudnnGetCudartVersion": "asked by the spy when it resolves the library",
    "cudnnBackendFinalizeEngineCfgVisualize": "cuDNN's JSON view of a finalized config",
    "cudnnBackendFinalizeGraphVisualize": "cuDNN's JSON view of a finalized graph",
}
LOG_ONLY_PREFIXES = (
    # cuDNN's internal names for parts of a call (cudnnBackendGetAttribute_CUDNN_ATTR_ENGINEHEUR_RESULTS_...,
    # cudnnCTCLossInternal).
    "cudnnBackendGetAttribute_", "cudnnCTCLossInternal",
)

# cuDNN calls some of its own exported functions inside others (cudnnSetTensor4dDescriptor calls
# cudnnSetTensor4dDescriptorEx, cudnnSetPooling2dDescriptor calls cudnnSetPoolingNdDescriptor, the backend
# finalizes descriptors it builds): logged by cuDNN, counted as internal by the spy and not recorded.
INTERNAL = {
    "cudnnSetTensor4dDescriptorEx", "cudnnSetTensorNdDescriptor", "cudnnSetPoolingNdDescriptor",
    "cudnnSetFilterNdDescriptor", "cudnnSetConvolutionNdDescriptor", "cudnnBackendFinalize",
    "cudnnBackendCreateDescriptor", "cudnnBackendSetAttribute", "cudnnBackendGetAttribute",
    "cudnnBackendDestroyDescriptor", "cudnnCreateTensorDescriptor", "cudnnDestroyTensorDescriptor",
    "cudnnGetTensorNdDescriptor", "cudnnGetFilterNdDescriptor", "cudnnSetTensorNdDescriptorEx",
    "cudnnSetTensorTransformDescriptor", "cudnnInitTransformDest", "cudnnCreateTensorTransformDescriptor",
    "cudnnDestroyTensorTransformDescriptor", "cudnnGetPoolingNdForwardOutputDim", "cudnnGetPoolingNdDescriptor",
    "cudnnGetConvolutionNdDescriptor", "cudnnGetConvolutionNdForwardOutputDim", "cudnnGetMaxDeviceVersion",
    "cudnnGetMultiHeadAttnBuffers",
}

# Entry points cuDNN logs under an internal name of its own.
LOGGED_AS = {
    "cudnnCTCLoss": "cudnnCTCLossInternal", "cudnnCTCLoss_v8": "cudnnCTCLossInternal",
    "cudnnGetCTCLossWorkspaceSize": "cudnnGetCTCLossWorkspaceSizeInternal",
    "cudnnGetCTCLossWorkspaceSize_v8": "cudnnGetCTCLossWorkspaceSizeInternal",
}

# Calls the spy answers itself, which never reach cuDNN: the program's cudnnGetLastErrorString after a failure
# gets the message the spy read for its record.
SPY_ANSWERS = {"cudnnGetLastErrorString"}

# cuDNN's log names some parameters otherwise than its headers (and the spy) do: {function or "*": {log: spy}}.
_IO = {"srcDesc": "xDesc", "srcData": "x", "destDesc": "yDesc", "destData": "y", "xData": "x", "wData": "w",
       "yData": "y"}
RENAMED = {
    "cudnnAddTensor": {"biasDesc": "aDesc", "biasData": "A", "srcDestDesc": "cDesc", "srcDestData": "C"},
    "cudnnActivationForward": _IO,
    "cudnnPoolingForward": _IO,
    "cudnnLRNCrossChannelForward": _IO,
    "cudnnConvolutionForward": _IO,
    "cudnnOpTensor": {"opDesc": "opTensorDesc", "aData": "A", "biasDesc": "bDesc", "biasData": "B",
                      "destDesc": "cDesc", "destData": "C"},
    # cuDNN logs cudnnCTCLoss's host arrays under cudnnCTCLossInternal's names, with the lengths' values.
    "cudnnCTCLoss": {"labels": "hostLabels", "labelLengths": "hostLabelLengths", "inputLengths": "hostInputLengths"},
    "cudnnReduceTensor": {"reduceDesc": "reduceTensorDesc", "aData": "A", "destDesc": "cDesc", "destData": "C"},
    "cudnnSetConvolution2dDescriptor": {"dataType": "computeType"},
    "cudnnSetConvolutionNdDescriptor": {"dataType": "computeType", "strideA": "filterStrideA"},
    "cudnnSetLRNDescriptor": {"n": "lrnN", "alpha": "lrnAlpha", "beta": "lrnBeta", "k": "lrnK"},
    "cudnnSetSpatialTransformerNdDescriptor": {"outputTensorNbDims": "nbDims"},
    "cudnnGetConvolution2dDescriptor": {"dataType": "computeType"},
    "cudnnGetConvolutionNdDescriptor": {"dataType": "computeType"},
    "cudnnGetLRNDescriptor": {"aNormDesc": "normDesc"},
    "cudnnDeriveBNTensorDescriptor": {"resultBnDesc": "derivedBnDesc", "dataDesc": "xDesc"},
    "cudnnFindConvolutionForwardAlgorithm": {"srcDesc": "xDesc", "filterDesc": "wDesc", "destDesc": "yDesc"},
    "cudnnFindConvolutionForwardAlgorithmEx": {"srcDesc": "xDesc", "srcData": "x", "filterDesc": "wDesc",
                                               "filterData": "w", "destDesc": "yDesc", "destData": "y"},
    "cudnnFindConvolutionBackwardDataAlgorithm": {"filterDesc": "wDesc", "diffDesc": "dyDesc", "gradDesc": "dxDesc"},
    "cudnnFindConvolutionBackwardDataAlgorithmEx": {"filterDesc": "wDesc", "filterData": "w", "diffDesc": "dyDesc",
                                                    "diffData": "dy", "gradDesc": "dxDesc", "gradData": "dx"},
    "cudnnFindConvolutionBackwardFilterAlgorithm": {"srcDesc": "xDesc", "diffDesc": "dyDesc", "gradDesc": "dwDesc"},
    "cudnnFindConvolutionBackwardFilterAlgorithmEx": {"srcDesc": "xDesc", "srcData": "x", "diffDesc": "dyDesc",
                                                      "diffData": "y", "gradDesc": "dwDesc", "gradData": "dw"},
    "cudnnGetConvolutionBackwardFilterWorkspaceSize": {"dwDesc": "gradDesc"},
    "cudnnGetFusedOpsVariantParamPackAttribute": {"ptrLabel": "paramLabel"},
    "cudnnGetReductionIndicesSize": {"reduceDesc": "reduceTensorDesc"},
    "cudnnGetReductionWorkspaceSize": {"reduceDesc": "reduceTensorDesc"},
    "*": {"mathPrec": "computePrec", "xData": "x", "wData": "w", "yData": "y", "zData": "z", "dyData": "dy",
          "dxData": "dx", "dwData": "dw"},
}


# A descriptor's fields that cuDNN's log names otherwise than the Set call's parameters.
DESC_RENAMED = {"bidirectional": "dirMode", "mathMode": "mathType", "mathPrec": "computePrec"}


def read_api(api_path):
    """From the spy's API description: {enum value name: number}, for what cuDNN logs as bare numbers, and
    {function: set of its out-parameters}."""
    enums, outs, fn = {}, {}, None
    with open(api_path) as f:
        for line in f:
            m = re.match(r"\t(\w+) = (-?\w+)", line)
            if m:
                enums[m.group(1)] = int(m.group(2), 0)
                continue
            m = re.match(r"function .*?(cudnn\w+) @", line)
            if m:
                fn = m.group(1)
                outs[fn] = set()
                continue
            m = re.match(r"\t(out|inout) .*?\*?(\w+)(\[\w*\])?$", line.rstrip())
            if m and fn:
                outs[fn].add(m.group(2))
    return enums, outs


ENUMS = {}
OUTS = {}


def load_api(api_path):
    enums, outs = read_api(api_path)
    ENUMS.update(enums)
    OUTS.update(outs)


def read_log(path):
    """[(fn, {param: value})] in call order, status blocks left out. A value is the text after `val=`, "addr=0x..."
    for an address cuDNN shows without a value, or a dict of a descriptor's fields."""
    calls, stack = [], None
    with open(path, errors="replace") as f:
        text = f.read()
    # A log quirk: cuDNN ends a NULL array's line without ";" and a line break, so the next field follows on the
    # same line after its indentation less one space.
    text = re.sub(r"val=NULL_PTR( +)(\w+: )", r"val=NULL_PTR;\ni! \1\2", text)
    for line in text.split("\n"):
        m = re.match(r"[IE]! CuDNN \(v\d+ \d+\) function (\w+)\(\) called:", line)
        if m:
            args = {}
            calls.append((m.group(1), args, line[0] == "E"))
            stack = [args]
            continue
        m = re.match(r"i!( +)([^:]+): (?:type=([^;:]*)(?:; val=(.*);|: ?)|location=\w+; addr=(\S+);)$", line)
        if not m or stack is None:
            continue
        depth = (len(m.group(1)) - 5) // 4
        if depth < 0:
            continue
        del stack[depth + 1:]
        if len(stack) <= depth:
            continue
        if m.group(5) is not None:
            stack[depth][m.group(2)] = "addr=" + m.group(5)
        elif m.group(4) is None:
            stack[depth][m.group(2)] = {KIND: (m.group(3) or "").strip()}
            stack.append(stack[depth][m.group(2)])
        else:
            stack[depth][m.group(2)] = m.group(4)
    out = []
    for name, args, error in calls:
        if error:
            continue
        # The status of the call before, in a block of its own (cudnnCreate adds the compute capability to it).
        if str(args.get("status", "")).startswith("CUDNN_STATUS_"):
            # cuDNN's own calls may come between a call and its status (cudnnCreate's initialization).
            back = [k for k in range(len(out) - 1, max(-1, len(out) - 8), -1) if out[k][0] == name]
            if back and "status" not in out[back[0]][1] and STATUS not in out[back[0]][1]:
                out[back[0]][1][STATUS] = args["status"]
                continue
        out.append((name, args))
    return out


STATUS = " status"     # the key of a call's logged status: no parameter has a space in its name
KIND = " kind"         # the key of a logged descriptor's type (cudnnTensorDescriptor_t, CUDNN_BACKEND_...)


def agrees(spy, log, padded=False):
    """Whether one value the spy recorded says what cuDNN logs: enums by name or number ("CUDNN_DATA_FLOAT (0)"),
    lists ("[1,2]"), NULL_PTR, addresses, numbers, booleans."""
    if isinstance(spy, dict):
        if "values" in spy and log.startswith("["):
            spy = spy["values"]
        elif "string" in spy:
            spy = spy["string"]
        elif "value" in spy and not log.startswith("addr="):
            spy = spy["value"]
        elif "ptr" in spy:
            spy = spy["ptr"]
    if log.startswith("addr="):
        log = log[5:]
        if log == "NULL_PTR":
            return spy is None
        return isinstance(spy, str) and spy.startswith("0x") and int(spy, 16) == int(log, 16)
    m = re.match(r"^(.*) \((-?(?:0x)?[0-9a-fA-F]+)\)$", log)
    if m:
        # By name, by number, or by the number of the spy's name (cuDNN's log calls CUDNN_NORM_OPS_NORM
        # CUDNN_NORM_OPS).
        return spy == m.group(1) or (isinstance(spy, int) and not isinstance(spy, bool) and
                                     spy == int(m.group(2), 0)) or \
            (isinstance(spy, str) and ENUMS.get(spy) == int(m.group(2), 0))
    if log.startswith("["):
        vals = [v for v in log.strip("[]").split(",") if v]
        # cuDNN keeps a descriptor's arrays at their largest size, zero after the ones set (or, for a tensor
        # transform's folds, what an earlier Set left there).
        if padded and isinstance(spy, list) and len(vals) > len(spy) and \
                (set(vals[len(spy):]) <= {"0"} or padded == "any"):
            vals = vals[:len(spy)]
        return isinstance(spy, list) and len(spy) == len(vals) and all(agrees(a, b) for a, b in zip(spy, vals))
    if log == "NULL_PTR":
        return spy is None
    if log in ("true", "false"):
        return spy == (log == "true")
    if isinstance(spy, str) and spy in ENUMS and re.match(r"^-?\d+$", log):
        # An enum field cuDNN logs as a plain int (a tensor transform's direction).
        return ENUMS[spy] == int(log)
    try:
        return isinstance(spy, (int, float)) and not isinstance(spy, bool) and float(spy) == float(log)
    except ValueError:
        return spy == log


class Result:
    def __init__(self):
        self.functions = set()
        self.calls = 0
        self.args = 0
        self.fields = 0
        self.mismatches = []
        self.log_only = {}
        self.skipped = {}
        self.unshown = {}           # {(descriptor kind, field): count} of fields the spy does not show
        self.unshown_where = {}     # the first call of each
        self.fields_unknown = {}    # {why: count} of fields the spy accounts for without a value
        self.views = {}

    def field_known(self, why):
        """A field cuDNN logs that the spy accounts for without a value to compare."""
        self.fields_unknown[why] = self.fields_unknown.get(why, 0) + 1

    def skip(self, why):
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def summary(self):
        return ("%d calls of %d functions, %d arguments and %d descriptor fields compared, %d mismatches; "
                "%d descriptor fields the spy accounts for without a value (never set, unknown, quirks), "
                "%d it does not show"
                % (self.calls, len(self.functions), self.args, self.fields, len(self.mismatches),
                   sum(self.fields_unknown.values()), sum(self.unshown.values())))

    def unshown_list(self):
        """The fields cuDNN's log shows that the spy does not, per descriptor kind and field, with the first
        call of each."""
        return ["%s %s: %d (first at %s)" % (kind, k, n, self.unshown_where[(kind, k)])
                for (kind, k), n in sorted(self.unshown.items())]


def packed(dims, fmt):
    """The strides cuDNN gives a packed tensor of this format."""
    n = len(dims)
    order = list(range(n)) if fmt != "CUDNN_TENSOR_NHWC" else [0] + list(range(2, n)) + [1]
    strides, acc = [0] * n, 1
    for k in reversed(order):
        strides[k] = acc
        acc *= dims[k]
    return strides


def from_desc_text(text, fields):
    """A summary ("half NHWC 8x16x32x64", "double 2x4x6x8 strides 192x48x8x1", "pad 1x1 stride 1x1 dilation 1x1
    cross_correlation float") as fields."""
    m = re.match(r"^(\w+) window ([\dx]+) pad ([\dx]+) stride ([\dx]+) (\w+)$", text or "")
    if m:
        win = [int(d) for d in m.group(2).split("x")]
        fields.update({"mode": "CUDNN_POOLING_" + m.group(1).upper(), "nbDims": len(win), "windowDimA": win,
                       "paddingA": [int(d) for d in m.group(3).split("x")],
                       "strideA": [int(d) for d in m.group(4).split("x")],
                       "maxpoolingNanOpt": "CUDNN_" + m.group(5).upper()})
        return
    m = re.match(r"^(\w+) coef (\S+) (\w+)$", text or "")
    if m:
        fields.update({"mode": "CUDNN_ACTIVATION_" + m.group(1).upper(), "coef": float(m.group(2)),
                       "reluNanOpt": "CUDNN_" + m.group(3).upper()})
        return
    m = re.match(r"^pad ([\dx]+) stride ([\dx]+) dilation ([\dx]+) (\w+) (\w+)$", text or "")
    if m:
        pad = [int(d) for d in m.group(1).split("x")]
        fields.update({"padA": pad, "arrayLength": len(pad), "strideA": [int(d) for d in m.group(2).split("x")],
                       "dilationA": [int(d) for d in m.group(3).split("x")], "mode": "CUDNN_" + m.group(4).upper(),
                       "dataType": "CUDNN_DATA_" + m.group(5).upper()})
        return
    m = re.match(r"^(\w+)(?: (NCHW|NHWC|NCHW_VECT_C))? ([\dx]+)(?: strides ([\dx]+))?$", text or "")
    if not m:
        return
    dims = [int(d) for d in m.group(3).split("x")]
    fields.update({"dataType": "CUDNN_DATA_" + m.group(1).upper(), "nbDims": len(dims), "dimA": dims})
    if m.group(2):
        fields["format"] = "CUDNN_TENSOR_" + m.group(2)
    if m.group(4):
        fields["strideA"] = [int(d) for d in m.group(4).split("x")]
    elif m.group(2) in ("NCHW", "NHWC"):
        fields["strideA"] = packed(dims, fields["format"])


def from_set(fn, a, fields):
    """The fields cuDNN shows of a legacy descriptor, from the Set call the spy remembers."""
    if fn == "cudnnSetTensor4dDescriptor":
        dims = [a["n"], a["c"], a["h"], a["w"]]
        fields.update({"dataType": a["dataType"], "nbDims": 4, "dimA": dims})
        if a["format"] in ("CUDNN_TENSOR_NCHW", "CUDNN_TENSOR_NHWC"):
            fields["strideA"] = packed(dims, a["format"])
    elif fn == "cudnnSetTensor4dDescriptorEx":
        fields.update({"dataType": a["dataType"], "nbDims": 4, "dimA": [a["n"], a["c"], a["h"], a["w"]],
                       "strideA": [a["nStride"], a["cStride"], a["hStride"], a["wStride"]]})
    elif fn == "cudnnSetTensorNdDescriptor":
        fields.update({"dataType": a["dataType"], "nbDims": a["nbDims"], "dimA": a.get("dimA"),
                       "strideA": a.get("strideA")})
    elif fn == "cudnnSetTensorNdDescriptorEx":
        fields.update({"dataType": a["dataType"], "nbDims": a["nbDims"], "dimA": a.get("dimA")})
        if a.get("dimA") and a["format"] in ("CUDNN_TENSOR_NCHW", "CUDNN_TENSOR_NHWC"):
            fields["strideA"] = packed(a["dimA"], a["format"])
    elif fn == "cudnnSetFilter4dDescriptor":
        fields.update({"dataType": a["dataType"], "format": a["format"], "nbDims": 4,
                       "dimA": [a["k"], a["c"], a["h"], a["w"]]})
    elif fn == "cudnnSetFilterNdDescriptor":
        fields.update({"dataType": a["dataType"], "format": a["format"], "nbDims": a["nbDims"],
                       "dimA": a.get("filterDimA")})
    elif fn == "cudnnSetConvolution2dDescriptor":
        fields.update({"mode": a["mode"], "dataType": a["computeType"], "arrayLength": 2,
                       "padA": [a["pad_h"], a["pad_w"]], "strideA": [a["u"], a["v"]],
                       "dilationA": [a["dilation_h"], a["dilation_w"]]})
    elif fn == "cudnnSetConvolutionNdDescriptor":
        fields.update({"mode": a["mode"], "dataType": a["computeType"], "arrayLength": a["arrayLength"],
                       "padA": a.get("padA"), "strideA": a.get("filterStrideA"), "dilationA": a.get("dilationA")})
    elif fn == "cudnnSetPoolingNdDescriptor":
        fields.update({"windowDimA": a.get("windowDimA"), "paddingA": a.get("paddingA"),
                       "strideA": a.get("strideA")})
    elif fn == "cudnnSetRNNDataDescriptor":
        fields["dimA"] = [a["maxSeqLength"], a["batchSize"], a["vectorSize"]]
    elif fn == "cudnnSetSpatialTransformerNdDescriptor" and a.get("dimA"):
        # The affine transform's and the grid's shapes, from the output's: N x (n-2) x (n-1), N x spatial x (n-2).
        # cuDNN logs nbDims elements of each.
        d, n = a["dimA"], a["nbDims"]
        fields.update({"thetaDimA": [d[0], n - 2, n - 1][:n], "gridDimA": ([d[0]] + d[2:] + [n - 2])[:n]})
    elif fn == "cudnnSetPooling2dDescriptor":
        fields.update({"nbDims": 2, "windowDimA": [a["windowHeight"], a["windowWidth"]],
                       "paddingA": [a["verticalPadding"], a["horizontalPadding"]],
                       "strideA": [a["verticalStride"], a["horizontalStride"]]})


# How cuDNN's log names a backend descriptor's attributes.
BACKEND_FIELDS = {
    "CUDNN_BACKEND_TENSOR_DESCRIPTOR": {
        "type": "CUDNN_ATTR_TENSOR_DATA_TYPE", "dimA": "CUDNN_ATTR_TENSOR_DIMENSIONS",
        "strideA": "CUDNN_ATTR_TENSOR_STRIDES", "uid": "CUDNN_ATTR_TENSOR_UNIQUE_ID",
        "alignmentInBytes": "CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT", "isVirtual": "CUDNN_ATTR_TENSOR_IS_VIRTUAL",
        "isByVal": "CUDNN_ATTR_TENSOR_IS_BY_VALUE"},
    "CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR": {
        "computeType": "CUDNN_ATTR_CONVOLUTION_COMP_TYPE", "mode": "CUDNN_ATTR_CONVOLUTION_CONV_MODE",
        "nbDims": "CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS", "upperPadA": "CUDNN_ATTR_CONVOLUTION_POST_PADDINGS",
        "lowerPadA": "CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS", "strideA": "CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES",
        "dilationA": "CUDNN_ATTR_CONVOLUTION_DILATIONS"},
    "CUDNN_BACKEND_POINTWISE_DESCRIPTOR": {
        "mode": "CUDNN_ATTR_POINTWISE_MODE", "mathPrec": "CUDNN_ATTR_POINTWISE_MATH_PREC",
        "nanOpt": "CUDNN_ATTR_POINTWISE_NAN_PROPAGATION", "ReluLowerClip": "CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP",
        "ReluUpperClip": "CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP",
        "ReluLowerClipSlope": "CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE"},
    "CUDNN_BACKEND_REDUCTION_DESCRIPTOR": {
        "mathPrec": "CUDNN_ATTR_REDUCTION_COMP_TYPE", "reduceOp": "CUDNN_ATTR_REDUCTION_OPERATOR"},
    "CUDNN_BACKEND_MATMUL_DESCRIPTOR": {"mathPrec": "CUDNN_ATTR_MATMUL_COMP_TYPE"},
    "CUDNN_BACKEND_ENGINE_DESCRIPTOR": {
        "opGraph": "CUDNN_ATTR_ENGINE_OPERATION_GRAPH", "engine_id": "CUDNN_ATTR_ENGINE_GLOBAL_INDEX",
        "knobDesc": "CUDNN_ATTR_ENGINE_KNOB_INFO", "numericalNotes": "CUDNN_ATTR_ENGINE_NUMERICAL_NOTE",
        "behaviorNotes": "CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE", "deviceProp": "CUDNN_ATTR_ENGINE_DEVICEPROP"},
    "CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR": {
        "alpha": "CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA",
        "beta": "CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA",
        "xDesc": "CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X", "wDesc": "CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W",
        "yDesc": "CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y",
        "convDesc": "CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC"},
    "CUDNN_BACKEND_ENGINECFG_DESCRIPTOR": {"engine": "CUDNN_ATTR_ENGINECFG_ENGINE"},
    "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR": {"engcfg": "CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG"},
    "CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR": {"operation": "CUDNN_ATTR_OPERATIONGRAPH_OPS"},
}

# A legacy descriptor's fields that cuDNN's log names otherwise than its Set call: {kind: {log: spy}}.
KIND_RENAMED = {
    "cudnnOpTensorDescriptor_t": {"op": "opTensorOp", "compType": "opTensorCompType", "nanOpt": "opTensorNanOpt"},
    "cudnnReduceTensorDescriptor_t": {"op": "reduceTensorOp", "compType": "reduceTensorCompType",
                                      "nanOpt": "reduceTensorNanOpt", "indices": "reduceTensorIndices",
                                      "indicesType": "reduceTensorIndicesType"},
    # cuDNN logs the CTC gradient mode as a cudnnNanPropagation_t (CUDNN_PROPAGATE_NAN for
    # CUDNN_CTC_SKIP_OOB_GRADIENTS): the number agrees.
    "cudnnCTCLossDescriptor_t": {"gradMode": "ctcGradMode"},
    "cudnnSpatialTransformerDescriptor_t": {"outputTensorNbDims": "nbDims"},
}

# cuDNN log quirks about descriptor fields, each with why: a field the spy cannot show because the log's value
# is not the descriptor's content. {(kind, field): why}. Anything else the log shows and the spy does not is a
# failure of the oracle test.
FIELD_QUIRKS = {
    ("cudnnRNNDescriptor_t", "clipNanOpt"):
        "after cudnnRNNSetClip_v9, which takes no NaN option, cuDNN 9.19 logs the NaN option it keeps inside; "
        "the spy shows the settings the program passed",
}


def spy_desc_fields(arg):
    """What the spy says of a descriptor argument, by the field names of cuDNN's log: derived from the Set call it
    remembers (or the summary text of a traced call), its single-value settings, a backend descriptor's
    attributes."""
    fields = {}
    if not isinstance(arg, dict):
        return fields
    if "set" in arg:
        fields.update(arg["set"].get("args", {}))
        try:
            from_set(arg["set"].get("fn"), arg["set"].get("args", {}), fields)
        except KeyError:
            pass
    elif "desc" in arg:
        from_desc_text(arg["desc"], fields)
    for k, v in arg.items():
        if k not in ("id", "desc", "set", "type", "finalized", "attrs", "set_failed"):
            fields[k] = v
    names = BACKEND_FIELDS.get(arg.get("type"), {})
    attrs = arg.get("attrs", {})
    for k, attr in names.items():
        if attr in attrs:
            v = attrs[attr]
            fields[k] = v
            if k == "dimA":
                fields["nbDims"] = len(v) if isinstance(v, list) else 1
    # A variant pack's data pointer per tensor uid, and its workspace.
    if arg.get("type") == "CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR":
        uids = attrs.get("CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS")
        ptrs = attrs.get("CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS")
        uids = [uids] if isinstance(uids, int) else uids
        ptrs = [ptrs] if isinstance(ptrs, str) or ptrs is None and uids else ptrs
        if isinstance(uids, list) and isinstance(ptrs, list):
            for u, p in zip(uids, ptrs):
                fields["Uid=%d" % u] = p
        if "CUDNN_ATTR_VARIANT_PACK_WORKSPACE" in attrs:
            fields["Workspace"] = attrs["CUDNN_ATTR_VARIANT_PACK_WORKSPACE"]
    # A filter's vectorized dimension: the channels (1) for NCHW_VECT_C, else none.
    if fields.get("format") and "vect" not in fields and ("set" in arg or "desc" in arg):
        fields["vect"] = 1 if fields["format"] == "CUDNN_TENSOR_NCHW_VECT_C" else 0
    given = arg.get("set", {}).get("args", {})
    # None from an argument the Set passed (a NULL dropout descriptor) says something; from a derivation, not.
    return {k: v for k, v in fields.items() if v is not None or k in given}


def unknown_why(arg, kind, k):
    """Why the spy shows no value for a field although it shows the descriptor: it says that it does not know
    (a failed Set, cuDNN wrote the descriptor) or that the field was never set (cuDNN's initial value), or
    None."""
    if not isinstance(arg, dict):
        return None
    if arg.get("set_failed"):
        return "state unknown after a failed Set (set_failed)"
    if arg.get("filled_by"):
        return "written by cuDNN (filled_by)"
    if arg.get("unset"):
        return "never set (unset): cuDNN's initial value"
    names = BACKEND_FIELDS.get(kind, {})
    if "attrs" in arg and (k in names or k == "nbDims" and "dimA" in names or
                           kind == "CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR"):
        return "backend attribute never set: cuDNN's default"
    return None


def compare_desc(res, where, arg, fields, renamed):
    spy = spy_desc_fields(arg)
    kind = fields.get(KIND, "")
    for k, v in fields.items():
        if k == KIND:
            continue
        if isinstance(v, dict):
            # A descriptor inside a backend one (an operation's tensors): the spy names it by id, and shows it
            # where it is an argument; its state now is what the spy showed of it last.
            ref = spy.get(k)
            ref = ref[0] if isinstance(ref, list) and ref else ref
            if isinstance(ref, str) and ref in res.views:
                compare_desc(res, where + "." + k, res.views[ref], v, renamed)
            elif ref is None and unknown_why(arg, kind, k):
                for f in v:
                    if f != KIND:
                        res.field_known(unknown_why(arg, kind, k))
            else:
                res.mismatches.append("%s: cuDNN shows the descriptor %s, the spy never did (%r)" % (where, k, ref))
            continue
        name = k if k in spy else KIND_RENAMED.get(kind, {}).get(k, renamed.get(k, DESC_RENAMED.get(k, k)))
        if name not in spy:
            why = unknown_why(arg, kind, k) or FIELD_QUIRKS.get((kind, k))
            if why:
                res.field_known(why)
                continue
            # A field cuDNN shows that the spy does not: the oracle test fails on it.
            key = (kind, k)
            res.unshown[key] = res.unshown.get(key, 0) + 1
            res.unshown_where.setdefault(key, "%s (spy: %s)" % (where, json.dumps(arg)[:300]))
            continue
        if isinstance(spy[name], str) and "#" in spy[name] and not v.startswith("["):
            res.field_known("object shown by id")
            continue
        res.fields += 1
        if not agrees(spy[name], v, padded="any" if k == "foldA" else True):
            res.mismatches.append("%s: field %s: spy %r, cuDNN %s" % (where, k, spy[name], v))


def scalars_agree(rec, args, fn):
    renamed = dict(RENAMED.get("*", {}))
    renamed.update(RENAMED.get(fn, {}))
    for k, v in args.items():
        if k == STATUS:
            if not agrees(rec["status"], v):
                return False
            continue
        spy = rec["args"].get(renamed.get(k, k))
        if isinstance(v, str) and not v.startswith("addr=") and not isinstance(spy, dict) and \
                not agrees(spy, v):
            return False
    return True


def quirk(fn, k, spy, v):
    """A value cuDNN logs otherwise, by design: the reason, or None."""
    if k == "cudaGraph" and spy is None and v == "false":
        return "a CUDA graph logged as whether there is one"
    # Those RENAMED pairs with the spy's are the same arguments, and must agree (issue 30: the CTC lengths).
    if fn in LOGGED_AS and k not in RENAMED.get(fn, {}) and not agrees(spy, v):
        return "a parameter of cuDNN's internal entry point"
    return None


def find(rec, log, i, window=64):
    """The log entry of this record: the first of its function from i on whose plain values agree (cuDNN may
    have logged internal calls of the same function before it), else the first of its function."""
    logged_as = LOGGED_AS.get(rec["fn"], rec["fn"])
    same = [j for j in range(i, min(len(log), i + window)) if log[j][0] == logged_as]
    for j in same:
        if scalars_agree(rec, log[j][1], rec["fn"]):
            return j
    if rec["fn"] in SPY_ANSWERS:
        return None     # the spy's own calls of it are logged, not this one
    return same[0] if same else None


def remember_views(res, rec):
    """The spy's latest view of each descriptor, for the state before a later Set: from the descriptors in
    the record's arguments, and a Create's new one (never set)."""
    for k, v in rec["args"].items():
        if isinstance(v, dict) and "id" in v:
            res.views[v["id"]] = v
        elif (rec["fn"].startswith("cudnnCreate") or rec["fn"] == "cudnnBackendCreateDescriptor") and \
                rec["status"] == 0 and isinstance(v, dict) and isinstance(v.get("value"), str) and "#" in v["value"]:
            if rec["fn"] == "cudnnBackendCreateDescriptor":
                res.views[v["value"]] = {"id": v["value"], "type": rec["args"].get("descriptorType"), "attrs": {}}
            else:
                res.views[v["value"]] = {"id": v["value"], "unset": True}


def compare(records, log, res=None):
    """Aligns the spy's records (one thread's `call` and `failure` records, in order) with cuDNN's log and
    compares them. Returns a Result."""
    res = res or Result()
    res.views = {}      # ids count again in each process
    i = 0
    for n, rec in enumerate(records):
        if n:
            remember_views(res, records[n - 1])
        fn = rec["fn"]
        j = find(rec, log, i)
        if j is None:
            if fn in SPY_ANSWERS:
                res.skip("answered by the spy")
            else:
                res.mismatches.append("%s: recorded by the spy, not in cuDNN's log after call %d" % (fn, i))
            continue
        for name, _ in log[i:j]:
            if name in LOG_ONLY or name.startswith(LOG_ONLY_PREFIXES) or name in INTERNAL:
                res.log_only[name] = res.log_only.get(name, 0) + 1
            else:
                res.mismatches.append("%s: in cuDNN's log, not recorded by the spy (before %s)" % (name, fn))
        args = log[j][1]
        i = j + 1
        res.calls += 1
        res.functions.add(fn)
        renamed = dict(RENAMED.get("*", {}))
        renamed.update(RENAMED.get(fn, {}))
        where = "%s #%d" % (fn, res.calls)
        logged_names = [k for k in args if k != STATUS]
        by_place = len(logged_names) == len(rec["args"]) and fn not in LOGGED_AS
        for k, v in args.items():
            name = k if k in rec["args"] else renamed.get(k, k)
            if name not in rec["args"] and by_place and k in logged_names:
                # cuDNN's log names many parameters its own way (srcDesc, destData, bnScaleData, ...): with as
                # many parameters on each side, the one in the same place.
                name = list(rec["args"])[logged_names.index(k)]
                res.skip("parameter named otherwise, paired by place")
            if k == STATUS:
                res.args += 1
                if not agrees(rec["status"], v):
                    res.mismatches.append("%s: status: spy %r, cuDNN %s" % (where, rec["status"], v))
                continue
            if not k.strip():
                res.skip("unnamed line")
                continue
            m = re.match(r"^\[(\d+)\]$", k)
            if m and fn in ("cudnnBackendSetAttribute", "cudnnBackendGetAttribute"):
                # The backend's elements, one line each.
                vals = rec["args"].get("arrayOfElements")
                vals = vals.get("values") if isinstance(vals, dict) else None
                if not vals or int(m.group(1)) >= len(vals):
                    res.mismatches.append("%s: cuDNN logs element %s, the spy has not got it" % (where, k))
                    continue
                if isinstance(vals[int(m.group(1))], str) and "#" in vals[int(m.group(1))]:
                    res.skip("object shown by id")
                    continue
                if rec["args"].get("attributeType") == "CUDNN_TYPE_VOID_PTR" and v.startswith("addr="):
                    # cuDNN logs where the pointers are, the same address for each element, not what they are.
                    res.skip("pointer element logged by its place")
                    continue
                res.args += 1
                if not agrees(vals[int(m.group(1))], v):
                    res.mismatches.append("%s: %s: spy %r, cuDNN %s" % (where, k, vals[int(m.group(1))], v))
                continue
            if name not in rec["args"]:
                if fn in LOGGED_AS:
                    res.skip("a parameter of cuDNN's internal entry point")
                    continue
                res.mismatches.append("%s: cuDNN logs %s, the spy has no such argument" % (where, k))
                continue
            if isinstance(v, dict):
                arg = rec["args"][name]
                if k == list(args)[0] and (fn.startswith("cudnnSet") or fn.startswith("cudnnRNNSetClip") or
                                           fn == "cudnnBackendSetAttribute"):
                    # cuDNN shows the descriptor a Set changes as it was before; the spy's record, after: the
                    # spy's state before is what it showed of the descriptor last.
                    arg = res.views.get(arg.get("id")) if isinstance(arg, dict) else None
                    if arg is None:
                        res.skip("descriptor of a Set, never shown before")
                        continue
                compare_desc(res, where + " " + k, arg, v, RENAMED["*"])
                continue
            spy = rec["args"][name]
            if name in OUTS.get(fn, ()) and not v.startswith("addr="):
                # cuDNN logs an out-parameter's value at entry, before the call wrote it.
                res.skip("out-parameter logged at entry")
                continue
            if isinstance(spy, (dict, str)) and ("#" in str(spy.get("id", "")) if isinstance(spy, dict)
                                                 else "#" in spy):
                # A handle or descriptor cuDNN shows by address or as NOT_IMPLEMENTED: the spy by its id.
                res.skip("object shown by id")
                continue
            if quirk(fn, k, spy, v):
                res.skip(quirk(fn, k, spy, v))
                continue
            res.args += 1
            if not agrees(spy, v):
                res.mismatches.append("%s: %s: spy %r, cuDNN %s" % (where, k, spy, v))
    for name, _ in log[i:]:
        if name in LOG_ONLY or name.startswith(LOG_ONLY_PREFIXES) or name in INTERNAL:
            res.log_only[name] = res.log_only.get(name, 0) + 1
        else:
            res.mismatches.append("%s: in cuDNN's log after the spy's last record" % name)
    return res
