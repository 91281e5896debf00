"""ONNX's backend test suite run on neomx: ``python -m neomx.contrib.onnx.backend_suite``.

Runs the node tests that the installed ``onnx`` package makes in memory (``onnx.backend.test
.case.node``; no data files needed) and the model tests shipped with it (simple, PyTorch
converted and operator, light real models) through ``backend.NeomxBackend``, compares the
outputs as ONNX's runner does (``Runner.assert_similar_outputs``: shapes, dtypes, rtol/atol),
and prints the pass counts per operator family and per opset range. With ``--export`` each
passing node test is also exported back to ONNX (``mx.onnx.export_model``) and run in
onnxruntime against the same expected outputs.

``--json FILE`` writes every test's outcome; ``-k SUBSTRING`` selects tests by name.
"""
import argparse
import collections
import json
import os
import sys
import time
import traceback
import warnings

import numpy as np

__all__ = ['node_cases', 'model_cases', 'run_case', 'main', 'FAMILIES', 'family_of']

# Operator families of the report (an operator not listed is in 'other').
FAMILIES = {
    'elementwise math': '''Abs Acos Acosh Add Asin Asinh Atan Atanh Ceil Cos Cosh Div Erf Exp
        Floor Log Max Mean Min Mod Mul Neg Pow Reciprocal Round Sign Sin Sinh Sqrt Sub Sum Tan
        Clip BitShift BitwiseAnd BitwiseNot BitwiseOr BitwiseXor IsInf IsNaN''',
    'logic and comparison': 'And Equal Greater GreaterOrEqual Less LessOrEqual Not Or Xor Where',
    'activations': '''Celu Elu Gelu HardSigmoid HardSwish Hardmax LeakyRelu LogSoftmax Mish
        PRelu Relu Selu Shrink Sigmoid Softmax Softplus Softsign Swish Tanh ThresholdedRelu''',
    'convolution and pooling': '''AveragePool Conv ConvTranspose GlobalAveragePool
        GlobalLpPool GlobalMaxPool LpPool MaxPool MaxUnpool DeformConv Col2Im''',
    'normalization': '''BatchNormalization GroupNormalization InstanceNormalization LRN
        LayerNormalization LpNormalization MeanVarianceNormalization RMSNormalization''',
    'linear algebra': 'Det Einsum Gemm MatMul Trilu',
    'reductions': '''ArgMax ArgMin ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax
        ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare CumSum CumProd TopK''',
    'shape and layout': '''Concat DepthToSpace Expand Flatten Identity Pad Reshape Shape Size
        Slice SpaceToDepth Split Squeeze Tile Transpose Unsqueeze CenterCropPad''',
    'indexing and scatter': '''Compress Gather GatherElements GatherND OneHot Scatter
        ScatterElements ScatterND TensorScatter''',
    'constants and casts': '''Cast CastLike Constant ConstantOfShape EyeLike Range''',
    'recurrent': 'GRU LSTM RNN',
    'resampling and vision': '''AffineGrid GridSample Resize Upsample RoiAlign MaxRoiPool
        NonMaxSuppression''',
    'losses': 'NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss',
    'attention (opset 23+)': '''Attention RotaryEmbedding LinearAttention SwiGLU
        CausalConvWithState FlexAttention''',
    'random': '''Bernoulli Dropout Multinomial RandomNormal RandomNormalLike RandomUniform
        RandomUniformLike''',
    'quantization': '''DequantizeLinear DynamicQuantizeLinear QuantizeLinear QLinearConv
        QLinearMatMul ConvInteger MatMulInteger''',
    'control flow': 'If Loop Scan',
    'sequences and optionals': '''ConcatFromSequence SequenceAt SequenceConstruct SequenceEmpty
        SequenceErase SequenceInsert SequenceLength SequenceMap SplitToSequence Optional
        OptionalGetElement OptionalHasElement''',
    'strings and text': '''RegexFullMatch StringConcat StringNormalizer StringSplit
        TfIdfVectorizer''',
    'signal processing': '''BlackmanWindow DFT HammingWindow HannWindow MelWeightMatrix STFT''',
    'data-dependent shapes': 'NonZero Unique',
    'other': 'BitCast ImageDecoder ReverseSequence',
}
_FAMILY_OF = {op: fam for fam, ops in FAMILIES.items() for op in ops.split()}


def family_of(op):
    return _FAMILY_OF.get(op, 'other')


def _main_op(model, name):
    """The operator a node test is about: its one node that is not a Constant (for an
    expanded test, the operator whose function body it is, from the test's name)."""
    ops = [n.op_type for n in model.graph.node if n.op_type != 'Constant']
    if len(set(ops)) == 1:
        return ops[0]
    return None


def node_cases(pattern=None):
    """ONNX's node test cases: [(name, model, [(inputs, outputs), ...], rtol, atol)]."""
    import onnx.backend.test.case.node as node
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        cases = node.collect_testcases(None)
    out = []
    for c in cases:
        if pattern and pattern not in c.name:
            continue
        out.append((c.name, c.model, c.data_sets, c.rtol, c.atol))
    return out


def _load_proto(path, type_proto):
    import onnx
    from onnx import numpy_helper
    with open(path, 'rb') as f:
        data = f.read()
    if type_proto.HasField('sequence_type'):
        s = onnx.SequenceProto()
        s.ParseFromString(data)
        return numpy_helper.to_list(s)
    t = onnx.TensorProto()
    t.ParseFromString(data)
    return numpy_helper.to_array(t)


def model_cases(pattern=None):
    """The model tests shipped with the onnx package: simple, pytorch-converted,
    pytorch-operator, and the light real models (the runner's inputs and outputs)."""
    import glob
    import onnx
    from onnx.backend.test.loader import DATA_DIR
    from onnx.backend.test.runner import Runner
    out = []
    for kind in ('simple', 'pytorch-converted', 'pytorch-operator'):
        for d in sorted(glob.glob(os.path.join(DATA_DIR, kind, '*'))):
            name = os.path.basename(d)
            if pattern and pattern not in name:
                continue
            path = os.path.join(d, 'model.onnx')
            if not os.path.exists(path):
                continue
            model = onnx.load(path)
            sets = []
            for ds in sorted(glob.glob(os.path.join(d, 'test_data_set*'))):
                ins = [_load_proto(os.path.join(ds, 'input_%d.pb' % i), model.graph.input[i].type)
                       for i in range(len(glob.glob(os.path.join(ds, 'input_*.pb'))))]
                outs = [_load_proto(os.path.join(ds, 'output_%d.pb' % i),
                                    model.graph.output[i].type)
                        for i in range(len(glob.glob(os.path.join(ds, 'output_*.pb'))))]
                sets.append((ins, outs))
            rtol, atol = 1e-3, 1e-7
            info = os.path.join(d, 'data.json')
            if os.path.exists(info):
                with open(info) as f:
                    data = json.load(f)
                rtol, atol = data.get('rtol', rtol), data.get('atol', atol)
            out.append(('%s/%s' % (kind, name), model, sets, rtol, atol))
    for path in sorted(glob.glob(os.path.join(DATA_DIR, 'light', '*.onnx'))):
        name = os.path.basename(path)[:-5]
        if pattern and pattern not in name:
            continue
        model = onnx.load(path)
        init = {t.name for t in model.graph.initializer}
        ins = [Runner.generate_dummy_data(i, seed=0, name=name, random=False)
               for i in model.graph.input if i.name not in init]
        outs = []
        for i in range(len(model.graph.output)):
            t = onnx.TensorProto()
            with open(path[:-5] + '_output_%d.pb' % i, 'rb') as f:
                t.ParseFromString(f.read())
            outs.append(onnx.numpy_helper.to_array(t))
        out.append(('light/' + name, model, [(ins, outs)], 1e-3, 1e-7))
    return out


# The opset the export check writes (torch's TorchScript exporter writes up to 20).
EXPORT_OPSET = 17


def _opset(model):
    v = [o.version for o in model.opset_import if o.domain in ('', 'ai.onnx')]
    return max(v) if v else None


def run_case(name, model, data_sets, rtol, atol, export=False):
    """Runs one test: {'result': 'pass' | 'fail' | 'error', 'message': ..., 'bound': [...],
    'export': None | 'pass' | 'fail' | 'error'}."""
    from onnx.backend.test.runner import Runner, _normalize_tensor
    from . import backend
    from .onnx2mx.import_onnx import ONNXImportError
    res = {'name': name, 'opset': _opset(model), 'op': _main_op(model, name), 'export': None,
           'bound': []}
    t0 = time.time()
    try:
        rep = backend.prepare(model)
        for inputs, expected in data_sets:
            inputs = [_normalize_tensor(t) for t in inputs]
            expected = [_normalize_tensor(t) for t in expected]
            outs = rep.run(inputs)
            Runner.assert_similar_outputs(expected, outs, rtol=rtol, atol=atol)
        res['bound'] = list(rep.bound)
        res['result'] = 'pass'
    except ONNXImportError as e:
        res['result'] = 'unsupported'
        res['message'] = str(e).splitlines()[0][:400]
    except AssertionError as e:
        res['result'] = 'fail'
        res['message'] = ' '.join(str(e).split())[:400]
    except Exception as e:
        res['result'] = 'error'
        tb = traceback.extract_tb(e.__traceback__)
        res['message'] = ('%s: %s' % (type(e).__name__, ' '.join(str(e).split())))[:400] + \
            ' [%s:%d]' % (os.path.basename(tb[-1].filename), tb[-1].lineno)
    if export and res['result'] == 'pass':
        res['export'] = _check_export(rep, data_sets, rtol, atol)
    res['seconds'] = round(time.time() - t0, 3)
    return res


def _check_export(rep, data_sets, rtol, atol):
    """Exports the imported Symbol (its bound constants included) with ``export_model`` and
    runs the ONNX file in onnxruntime against the expected outputs."""
    import tempfile
    import onnxruntime as ort
    from onnx.backend.test.runner import Runner
    from ...symbol.onnx import export_model
    from ...util import np_shape
    from .onnx2mx.import_onnx import _np_dtype_name
    from onnx.backend.test.runner import _normalize_tensor
    inputs, expected = data_sets[0]
    inputs = [_normalize_tensor(t) for t in inputs]
    expected = [_normalize_tensor(t) for t in expected]
    feeds = dict(zip(rep.input_names, inputs))
    try:
        with np_shape(True):
            sym, arg_params, aux_params = rep._imported or rep._import(feeds)
        params = dict(arg_params)
        params.update(aux_params)
        data = [n for n in sym.list_inputs() if n not in params]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'model.onnx')
            with np_shape(True):
                export_model(sym, params, [np.shape(feeds[n]) for n in data],
                             [_np_dtype_name(np.asarray(feeds[n]), n) for n in data], path,
                             opset_version=EXPORT_OPSET)
            sess = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
            names = [i.name for i in sess.get_inputs()]
            outs = sess.run(None, {k: np.asarray(feeds[k]) for k in names})
        Runner.assert_similar_outputs(expected, outs, rtol=rtol, atol=atol)
        return 'pass'
    except AssertionError:
        return 'fail'
    except Exception as e:
        return 'error: %s' % ' '.join(str(e).split())[:200]


def _range(opset):
    if opset is None:
        return 'none'
    for lo, hi in ((1, 12), (13, 17), (18, 22), (23, 99)):
        if lo <= opset <= hi:
            return '%d-%d' % (lo, hi) if hi < 99 else '%d+' % lo
    return str(opset)


# Why a test does not pass, by the first rule its operator or message matches: the tests that
# cannot be honest in MXNet's world (its dtypes, tensors only, no complex numbers or strings,
# shapes known before running), and the others.
_WHY = [
    ('dtype', 'a data type MXNet does not have (unsigned 16-64 bit, 8/4/2-bit floats and '
              'integers, strings, complex)',
     lambda r: 'has no neomx counterpart' in r.get('message', '')),
    ('sequences and optionals', 'sequences, optionals and maps: MXNet has tensors only',
     lambda r: 'sequence_type' in r.get('message', '') or 'optional_type' in
     r.get('message', '') or family_of(r['op'] or '') == 'sequences and optionals'
     or 'Sequence' in r.get('message', '') or 'Optional' in r.get('message', '')),
    ('other domains', 'operators of ai.onnx.ml, ai.onnx.preview(.training): not ONNX\'s '
                      'default domain', lambda r: "of domain '" in r.get('message', '')),
    ('control flow', 'Scan of opset 8 (a batch axis and sequence lengths), Loops whose scan '
                     'outputs\' length is known only at run time (MXNet\'s shapes are known '
                     'before running)',
     lambda r: any(k in r.get('message', '') for k in ('(Loop,', '(Scan,', '(If,'))),
    ('strings and images', 'strings, regular expressions, text vectorizers, image decoding',
     lambda r: family_of(r['op'] or '') == 'strings and text' or 'string' in
     r.get('message', '') or 'ImageDecoder' in r.get('message', '')),
    ('complex numbers', 'DFT and STFT compute complex numbers',
     lambda r: any(k in r.get('message', '') for k in ('(DFT,', '(STFT,'))),
    ('data-dependent shapes', 'the output\'s shape depends on the values (NonZero, Unique, '
                              'NonMaxSuppression): MXNet infers shapes before running',
     lambda r: any(k in r.get('message', '') for k in ('(Unique,', '(NonMaxSuppression,',
                                                       '(NonZero,'))),
    ('random', 'random numbers: neomx\'s generator, not the values ONNX\'s seed gives',
     lambda r: r['result'] == 'fail' and (r['op'] in ('Bernoulli', 'Dropout') or
                                          'bernoulli' in r['name'] or 'dropout' in r['name'])
     or 'dropout in training mode' in r.get('message', '')),
]


def why(result):
    """(category, reason) of a test that does not pass."""
    for key, reason, rule in _WHY:
        if rule(result):
            return key, reason
    return 'not converted', 'neomx could express it but does not yet (see the message)'


def _base_name(name):
    """The test an expanded test expands (``test_x_expanded_ver18`` -> ``test_x``)."""
    i = name.find('_expanded')
    return name[:i] if i > 0 else name


def report(results, out=sys.stdout):
    """Prints the pass counts per family and per opset range."""
    by_fam = collections.defaultdict(collections.Counter)
    by_range = collections.defaultdict(collections.Counter)
    ops = {r['name']: r['op'] for r in results}
    for r in results:
        op = r['op'] or ops.get(_base_name(r['name']))
        fam = family_of(op) if op else 'multi-operator models'
        if _base_name(r['name']) != r['name']:
            fam += ' (expanded)'
        for table, key in ((by_fam, fam), (by_range, _range(r['opset']))):
            table[key][r['result']] += 1
            table[key]['exported'] += r['export'] == 'pass'
        
    cols = ('pass', 'fail', 'error', 'unsupported')
    exported = any(r['export'] is not None for r in results)
    extra = ('exported',) if exported else ()
    line = '%-40s' + ' %6s' * (len(cols) + 1 + len(extra))
    for title, table in (('family', by_fam), ('opset', by_range)):
        print(line % ((title,) + cols + ('total',) + extra), file=out)
        for key in sorted(table):
            c = table[key]
            print(line % ((key,) + tuple(c[k] for k in cols) + (sum(c[k] for k in cols),) +
                          ((c['exported'],) if exported else ())), file=out)
        print(file=out)
    total = collections.Counter(r['result'] for r in results)
    print('total: %s%s' % (dict(total), ', exported again and run in onnxruntime: %d'
                           % sum(r['export'] == 'pass' for r in results) if exported else ''),
          file=out)
    reasons = collections.defaultdict(list)
    for r in results:
        if r['result'] != 'pass':
            reasons[why(r)].append(r['name'])
    if reasons:
        print('\nnot passing, why:', file=out)
        for (key, reason), names in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
            print('%5d  %s: %s' % (len(names), key, reason), file=out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('-k', dest='pattern', help='run the tests whose names contain this')
    p.add_argument('--models', action='store_true', help='the model tests too')
    p.add_argument('--no-nodes', action='store_true', help='not the node tests')
    p.add_argument('--export', action='store_true', help='check export of passing tests')
    p.add_argument('--json', help='write every outcome to this file')
    p.add_argument('-v', action='store_true', help='print each outcome')
    args = p.parse_args(argv)
    cases = [] if args.no_nodes else node_cases(args.pattern)
    if args.models:
        cases += model_cases(args.pattern)
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for case in cases:
            r = run_case(*case, export=args.export)
            results.append(r)
            if args.v:
                print('%-60s %-11s %s%s' % (r['name'], r['result'], r.get('message', ''),
                                            '' if r['export'] is None else
                                            ' [export: %s]' % r['export']), flush=True)
    report(results)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(results, f, indent=1)
    return results


if __name__ == '__main__':
    main()
