"""Automatic mixed precision (``mx.contrib.amp``): the lists, the graph conversion against
MXNet 1.9.1's (node for node), the JSON round trip, the loss scale and the trainer."""
import json
import textwrap

import numpy as np
import pytest

import neomx as mx
from neomx import autograd, gluon
from neomx.contrib import amp
from neomx.contrib.amp import amp as amp_module
from neomx.ops import amp as amp_table


@pytest.fixture(autouse=True)
def own_names():
    """Each test names its blocks and symbols from fresh counters (dense0_, activation0),
    leaving the process's counters to the tests that read them."""
    with mx.name.NameManager():
        yield


@pytest.fixture
def amp_off():
    """Runs a test that calls amp.init and turns AMP off again afterwards."""
    amp_module._deinit()
    yield
    amp_module._deinit()


# -- the lists --------------------------------------------------------------------------------

def test_lists_are_mxnets(mxnet_ref):
    out = mxnet_ref(textwrap.dedent('''
        import json
        from mxnet.contrib import amp
        res = {}
        for t, key in (('float16', 'float16'), (amp.amp.bfloat16, 'bfloat16')):
            res[key] = [amp.list_lp16_ops(t), amp.list_fp32_ops(t), amp.list_lp16_fp32_ops(t),
                        amp.list_conditional_fp32_ops(t), amp.list_widest_type_cast(t),
                        amp.list_loss_output_functions(t), amp.list_lp16_use_fp32_params(t)]
        print(json.dumps(res))
    '''))
    ref = json.loads(out)
    for key, t in (('float16', 'float16'), ('bfloat16', amp.bfloat16)):
        mine = [amp.list_lp16_ops(t), amp.list_fp32_ops(t), amp.list_lp16_fp32_ops(t),
                [list(c) for c in amp.list_conditional_fp32_ops(t)],
                amp.list_widest_type_cast(t), amp.list_loss_output_functions(t),
                amp.list_lp16_use_fp32_params(t)]
        assert json.loads(json.dumps(mine)) == ref[key]
    assert amp.list_lp16_ops(np.float16) == ref['float16'][0]
    with pytest.raises(AssertionError, match='not supported type'):
        amp.list_fp32_ops('float32')


def test_table_classes_follow_mxnet_names():
    t = amp_table.CastTable('float16')
    get = mx.ops.registry.get if hasattr(mx, 'ops') else None
    from neomx.ops import registry
    get = registry.get
    assert t.kind(get('Convolution'), {}) == amp_table.LOW
    assert t.kind(get('softmax'), {}) == amp_table.FP32
    assert t.kind(get('_plus'), {}) == amp_table.WIDEST         # elemwise_add, by alias
    assert t.kind(get('relu'), {}) is None
    act = get('Activation')
    assert t.kind(act, act.parse_attrs({'act_type': 'softrelu'})) == amp_table.FP32
    assert t.kind(act, act.parse_attrs({'act_type': 'relu'})) is None
    bf = amp_table.CastTable('bfloat16')
    assert bf.kind(get('Deconvolution'), {}) == amp_table.FP32     # float16 runs it low
    bn = get('BatchNorm')
    custom = amp_table.CastTable('bfloat16', low=['BatchNorm'])
    dtypes = ('float32',) * 5
    # bfloat16's BatchNorm keeps its parameters in float32 (BF16_USE_FP32_PARAMS)
    assert custom.casts(bn, bn.parse_attrs({}), dtypes) is None
    fc = get('FullyConnected')
    assert t.casts(fc, {}, ('float64', 'float32', None)) == (None, 'float16', None)
    assert t.casts(get('broadcast_add'), {}, ('float16', 'bfloat16')) == ('float32',
                                                                          'float32')
    with pytest.raises(ValueError, match='float16 or bfloat16'):
        amp_table.CastTable('float32')


def test_every_listed_operator_neomx_has_keeps_mxnets_name():
    """The table matches nodes by MXNet's canonical operator name: each name of the lists
    that neomx registers resolves to an operator whose MXNet name is that name's (names MXNet
    registers as aliases excepted, which the conversion never sees)."""
    from neomx.ops import registry
    aliases = {'cast': 'Cast', '_add': 'elemwise_add', 'concat': 'Concat', 'flatten': 'Flatten',
               'reshape': 'Reshape', 'split': 'SliceChannel', 'swapaxes': 'SwapAxis',
               '_Plus': 'elemwise_add', '_plus': 'elemwise_add', '_sub': 'elemwise_sub',
               '_minus': 'elemwise_sub', '_Minus': 'elemwise_sub', '_mul': 'elemwise_mul',
               '_Mul': 'elemwise_mul', '_div': 'elemwise_div', '_Div': 'elemwise_div',
               'ElementWiseSum': 'add_n', 'broadcast_plus': 'broadcast_add',
               'broadcast_minus': 'broadcast_sub', 'stop_gradient': 'BlockGrad',
               'identity': '_copy', 'pad': 'Pad', 'crop': 'slice', 'flip': 'reverse',
               '_Hypot': '_hypot', 'Softmax': 'SoftmaxOutput', 'choose_element_0index': 'pick'}
    for name in (amp.list_fp32_ops('float16') + amp.list_lp16_ops('float16') +
                 amp.list_widest_type_cast('float16')):
        if registry.exists(name) and name in aliases:
            assert amp_table.mxnet_name(registry.get(name)) == aliases[name], name


# -- converting graphs, against MXNet 1.9.1 ---------------------------------------------------

# Each case builds ``out`` with the symbol API that MXNet 1.9.1 and neomx share; ``kw`` are
# convert_symbol's keyword arguments.
_CASES = {
    'conv_bn_fc': ('''
        c = mx.sym.Convolution(x, num_filter=4, kernel=(3, 3), name='conv')
        b = mx.sym.BatchNorm(c, name='bn')
        r = mx.sym.Activation(b, act_type='relu', name='act')
        p = mx.sym.Pooling(r, kernel=(2, 2), pool_type='max', name='pool')
        f = mx.sym.FullyConnected(p, num_hidden=10, name='fc')
        e = mx.sym.exp(f, name='exp')
        out = mx.sym.softmax(mx.sym.elemwise_add(e, f, name='plus'), name='sm')''', {}),
    'widest_of_unknowns': ('out = mx.sym.broadcast_add(x, y, name="add")', {}),
    'widest_low_and_input': ('out = mx.sym.broadcast_add(fc(x, "fc1"), y, name="add")', {}),
    'widest_low_low_then_fc': ('''
        out = fc(mx.sym.broadcast_add(fc(x, "fc1"), fc(y, "fc2"), name="add"), "fc3")''', {}),
    'widest_low_and_fp32': ('''
        a = mx.sym.broadcast_add(fc(x, "fc1"), mx.sym.exp(y, name="e"), name="add")
        out = fc(a, "fc2")''', {}),
    'widest_fp32_and_input': ('''
        out = mx.sym.broadcast_add(mx.sym.exp(x, name="e"), y, name="add")''', {}),
    'widest_same_twice': ('out = mx.sym.broadcast_add(x, x, name="add")', {}),
    'shared_fp32_cast': ('''
        f = fc(x, "fc1")
        out = mx.sym.Group([mx.sym.exp(f, name="e1"), mx.sym.log(f, name="l1"), f])''', {}),
    'conditional': ('''
        out = mx.sym.Group([mx.sym.Activation(fc(x, "fc1"), act_type="softrelu", name="a"),
                            mx.sym.Activation(fc(y, "fc2"), act_type="relu", name="b")])''', {}),
    'excluded': ('out = fc(fc(x, "fc1"), "fc2")', {'excluded_sym_names': ['fc2']}),
    'cast_optional_all_data': ('out = fc(fc(x, "fc1"), "fc2")', {'cast_optional_params': True}),
    'cast_optional_params': ('''
        w = mx.sym.var("w")
        c = mx.sym.Convolution(x, num_filter=4, kernel=(1, 1), name="c")
        out = mx.sym.Group([mx.sym.FullyConnected(x, w, no_bias=True, num_hidden=4, name="f"),
                            mx.sym.exp(w, name="e"), mx.sym.BatchNorm(c, name="bn"),
                            mx.sym.broadcast_add(fc(x, "fc1"), y, name="add")])''',
                             {'data_names': ['x'], 'cast_optional_params': True}),
    'split_outputs': ('''
        s = mx.sym.split(fc(x, "fc1"), num_outputs=2, name="sp")
        out = mx.sym.Group([mx.sym.exp(s[0], name="e"), s[1]])''', {}),
    'heads_input_and_other': ('''
        out = mx.sym.Group([x, fc(x, "fc1"), mx.sym.relu(y, name="r")])''', {}),
    'pass_through_ops': ('''
        a = fc(mx.sym.relu(x, name="r0"), "fc0")
        b = fc(mx.sym.Dropout(mx.sym.relu(fc(a, "fc1"), name="r1"), name="dr"), "fc2")
        c = fc(mx.sym.reshape_like(fc(x, "fc3"), y, name="rl"), "fc4")
        out = mx.sym.Group([mx.sym.exp(mx.sym.relu(b, name="r2"), name="e"), c,
                            fc(mx.sym.exp(x, name="e2"), "fc5")])''', {}),
    'add_n': ('''
        out = mx.sym.Group([mx.sym.add_n(fc(x, "fc1"), y, x, name="an"),
                            mx.sym.broadcast_add(fc(y, "fc3"), mx.sym.relu(fc(y, "fc3"),
                                                 name="r"), name="add")])''', {}),
    # float16 only: bfloat16 runs Concat as its inputs come, and MXNet's conversion then
    # fails its own type check on a bfloat16 and a float32 input
    'concat': ('out = mx.sym.Concat(fc(x, "fc2"), y, name="cc")', {'only': 'float16'}),
    'user_lists': ('out = mx.sym.relu(mx.sym.exp(x, name="e"), name="r")',
                   {'target_dtype_ops': ['exp'], 'fp32_ops': []}),
    'loss_output': ('out = mx.sym.SoftmaxOutput(fc(x, "fc1"), name="so")', {}),
    'bn_of_input': ('out = mx.sym.BatchNorm(x, name="bn")', {}),
    'deconv_rnn_embedding': ('''
        d = mx.sym.Deconvolution(x, num_filter=2, kernel=(2, 2), name="dc")
        e = mx.sym.Embedding(y, input_dim=5, output_dim=3, name="emb")
        out = mx.sym.Group([d, fc(e, "fc1")])''', {}),
}

_PRELUDE = '''
x = mx.sym.var('x')
y = mx.sym.var('y')
def fc(a, n):
    return mx.sym.FullyConnected(a, num_hidden=4, name=n)
'''


def _structure(text):
    """The nodes and heads of symbol JSON ``text``, with the attributes the conversion sets:
    the casts' and a variable's ``__dtype__`` (MXNet writes an operator's attributes as they
    were given, neomx leaves defaults out, and MXNet copies them onto the parameters it
    creates)."""
    doc = json.loads(text)
    nodes = []
    for n in doc['nodes']:
        attrs = n.get('attrs', {})
        if n['op'] == 'null':
            attrs = {k: v for k, v in attrs.items() if k == '__dtype__'}
        elif n['op'] not in ('amp_cast', 'amp_multicast'):
            attrs = {}
        nodes.append((n['op'], n['name'], attrs, [i[:2] for i in n['inputs']]))
    return nodes, [h[:2] for h in doc['heads']]


def _cases(target):
    return {name: (code, {k: v for k, v in kw.items() if k != 'only'})
            for name, (code, kw) in _CASES.items() if kw.get('only', target) == target}


def _convert_cases(amp_mod, mx_mod, cases, target):
    out = {}
    for name, (code, kw) in cases.items():
        env = {'mx': mx_mod}
        exec(_PRELUDE + textwrap.dedent(code), env)
        conv = amp_mod.convert_symbol(env['out'], target_dtype=target, **kw)
        out[name] = conv.tojson(remove_amp_cast=False)
    return out


@pytest.mark.parametrize('target', ['float16', 'bfloat16'])
def test_convert_symbol_matches_mxnet_node_for_node(mxnet_ref, target):
    script = 'import json, textwrap\nimport mxnet as mx\nfrom mxnet.contrib import amp\n'
    script += '_PRELUDE = %r\n' % _PRELUDE
    cases = _cases(target)
    script += 'cases = %r\n' % (cases,)
    script += textwrap.dedent('''
        out = {}
        for name, (code, kw) in cases.items():
            env = {'mx': mx}
            exec(_PRELUDE + textwrap.dedent(code), env)
            conv = amp.convert_symbol(env['out'], target_dtype=%r, **kw)
            out[name] = conv.tojson(remove_amp_cast=False)
        print(json.dumps(out))
    ''' % target)
    ref = json.loads(mxnet_ref(script))
    mine = _convert_cases(amp, mx, cases, target)
    for name in cases:
        assert _structure(mine[name]) == _structure(ref[name]), name


def test_convert_resnet_matches_mxnet(mxnet_ref):
    """ResNet-18 v1 of the model zoo, both ways, in bfloat16 and in float16 with its
    parameters stored in float16."""
    code = textwrap.dedent('''
        with mx.name.NameManager():     # resnetv10_, whatever the process made before
            net = mx.gluon.model_zoo.vision.resnet18_v1()
        out = net(mx.sym.var('data'))
        a = amp.convert_symbol(out, 'bfloat16')
        b = amp.convert_symbol(out, 'float16', data_names=['data'], cast_optional_params=True,
                               excluded_sym_names=['resnetv10_dense0_fwd'])
        res = [a.tojson(remove_amp_cast=False), b.tojson(remove_amp_cast=False), a.tojson()]
    ''')
    ref = json.loads(mxnet_ref('import json\nimport mxnet as mx\nfrom mxnet.contrib import amp\n'
                               + code + 'print(json.dumps(res))\n'))
    env = {'mx': mx, 'amp': amp}
    exec(code, env)
    for mine, theirs in zip(env['res'], ref):
        assert _structure(mine) == _structure(theirs)


def test_convert_symbol_checks_its_arguments():
    x = mx.sym.var('x')
    with pytest.raises(AssertionError, match='float16 and bfloat16'):
        amp.convert_symbol(x, 'float32')
    with pytest.raises(AssertionError, match="Common ops in target_dtype_ops and fp32_ops"):
        amp.convert_symbol(x, 'float16', target_dtype_ops=['exp'])
    with pytest.raises(AssertionError, match="not in any of them"):
        amp.convert_symbol(x, 'float16', target_dtype_ops=['nonexistent'], fp32_ops=[])
    with pytest.raises(AssertionError, match='excluded_sym_names should be a list'):
        amp.convert_symbol(x, 'float16', excluded_sym_names='fc')
    with pytest.raises(AssertionError, match='should be Symbol'):
        amp.convert_symbol(mx.nd.ones(2), 'float16')


# -- JSON: remove_amp_cast, round trips --------------------------------------------------------

def test_tojson_removes_the_casts_unless_asked(mxnet_ref):
    fc = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=4, name='fc')
    net = mx.sym.broadcast_add(mx.sym.exp(fc, name='e'), mx.sym.var('y'), name='add')
    conv = amp.convert_symbol(net, 'bfloat16')
    plain = [n['name'] for n in json.loads(conv.tojson())['nodes']]
    # the casts go but for the one that is the graph's output
    assert plain == [n['name'] for n in json.loads(net.tojson())['nodes']] + \
        ['add_0_amp_cast_float32']
    kept = conv.tojson(remove_amp_cast=False)
    assert 'fc_output_amp_cast_float32' in kept and 'amp_multicast' in kept
    # MXNet reads what neomx writes and removes the same nodes
    out = mxnet_ref(textwrap.dedent('''
        import json, mxnet as mx
        s = mx.sym.load_json(%r)
        print(json.dumps([n['name'] for n in json.loads(s.tojson())['nodes']]))
    ''' % kept))
    assert json.loads(out) == plain
    assert _structure(kept) == _structure(mx.sym.load_json(kept).tojson(remove_amp_cast=False))
    # chains of casts, and a multicast that is the output (checked against MXNet 1.9.1)
    x = mx.sym.var('x')
    chain = mx.sym.amp_cast(mx.sym.amp_cast(x, dtype='float16', name='c1'), dtype='float32',
                            name='c2')
    assert [n['name'] for n in json.loads(mx.sym.relu(chain, name='r').tojson())['nodes']] \
        == ['x', 'r']
    multi = mx.sym.amp_multicast(x, mx.sym.amp_cast(x, dtype='float16', name='c1'),
                                 num_outputs=2, name='m')
    doc = json.loads(multi.tojson())
    assert [(n['name'], n['inputs']) for n in doc['nodes']] == \
        [('x', []), ('m', [[0, 0, 0], [0, 0, 0]])]
    assert doc['heads'] == [[1, 0, 0], [1, 1, 0]]


def test_converted_symbol_runs_in_bfloat16_and_round_trips(tmp_path):
    data = mx.sym.var('data')
    c = mx.sym.Convolution(data, num_filter=4, kernel=(3, 3), pad=(1, 1), name='conv')
    r = mx.sym.Activation(mx.sym.BatchNorm(c, name='bn'), act_type='relu', name='act')
    f = mx.sym.FullyConnected(r, num_hidden=5, name='fc')
    net = mx.sym.softmax(f, name='sm')
    args, _, aux = net.infer_shape(data=(2, 3, 6, 6))
    rng = np.random.RandomState(0)
    arg_params = {n: mx.nd.array(rng.uniform(-0.5, 0.5, s)) for n, s in
                  zip(net.list_arguments(), args) if n != 'data'}
    aux_params = {'bn_moving_mean': mx.nd.zeros(4), 'bn_moving_var': mx.nd.ones(4)}
    x = mx.nd.array(rng.uniform(size=(2, 3, 6, 6)))

    def run(sym, ap, xp):
        ex = sym.bind(mx.cpu(), dict(ap, data=x), aux_states=dict(xp))
        return ex.forward()[0]

    want = run(net, arg_params, aux_params).asnumpy()
    conv, ap, xp = amp.convert_model(net, dict(arg_params), dict(aux_params), 'bfloat16',
                                     cast_optional_params=True)
    assert ap['conv_weight'].dtype == amp.bfloat16 and ap['fc_weight'].dtype == amp.bfloat16
    assert xp['bn_moving_var'].dtype == np.float32
    got = run(conv, ap, xp)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.asnumpy(), want, atol=0.02)
    # through -symbol.json and back: the same graph, the same result
    path = str(tmp_path / 'net-symbol.json')
    conv.save(path, remove_amp_cast=False)
    back = mx.sym.load(path)
    assert _structure(back.tojson(remove_amp_cast=False)) == \
        _structure(conv.tojson(remove_amp_cast=False))
    np.testing.assert_array_equal(run(back, ap, xp).asnumpy(), got.asnumpy())


# -- the loss scale and the trainer --------------------------------------------------------------

def test_loss_scaler_halves_on_overflow_and_doubles_after_a_clean_window(mxnet_ref):
    """The scale MXNet's LossScaler reports after each step of a run of finite and
    overflowing gradients, compared step by step."""
    pattern = [0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0]
    code = textwrap.dedent('''
        import json, numpy as np, mxnet as mx
        from mxnet.contrib.amp.loss_scaler import LossScaler
        p = mx.gluon.Parameter('w', shape=(2,))
        p.initialize()
        s = LossScaler()
        s._scale_seq_len = 3
        out = []
        for bad in %r:
            p.grad()[:] = mx.nd.array([1.0, np.inf if bad else 2.0])
            out.append([bool(s.has_overflow([p])), s.loss_scale])
        print(json.dumps(out))
    ''' % (pattern,))
    ref = json.loads(mxnet_ref(code))
    env = {}
    exec(code.replace('mxnet', 'neomx').replace('print(json.dumps(out))', ''), env)
    assert env['out'] == ref


def _trainer_run(mxmod, ampmod, overflow_at):
    """Three steps of a Dense layer with AMP's loss scale, a gradient made infinite at step
    ``overflow_at``; the weights and scales after each."""
    net = mxmod.gluon.nn.Dense(2, in_units=3, use_bias=False)
    net.initialize(mxmod.init.Constant(0.5))
    trainer = mxmod.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    ampmod.init_trainer(trainer)
    x = mxmod.nd.array([[1.0, 2.0, 3.0]])
    out = []
    for step in range(3):
        with mxmod.autograd.record():
            loss = net(x).sum()
            with ampmod.scale_loss(loss, trainer) as scaled:
                scaled.backward()
        if step == overflow_at:
            net.weight.grad()[:] = np.inf
        trainer.step(1)
        out.append([net.weight.data().asnumpy().tolist(), trainer._amp_loss_scaler.loss_scale,
                    trainer._scale])
    return out


def test_trainer_skips_an_overflowing_step_and_unscales(amp_off, mxnet_ref):
    ref = json.loads(mxnet_ref(textwrap.dedent('''
        import json, numpy as np, mxnet as mx, inspect
        from mxnet.contrib import amp
        amp.init('bfloat16')
        exec(%r)
        print(json.dumps(_trainer_run(mx, amp, 1)))
    ''' % textwrap.dedent(_source(_trainer_run)))))
    amp.init('bfloat16')
    mine = _trainer_run(mx, amp, 1)
    for (w, scale, tscale), (rw, rscale, rtscale) in zip(mine, ref):
        np.testing.assert_allclose(w, rw, rtol=1e-6)    # SGD's rounding differs by an ulp
        assert (scale, tscale) == (rscale, rtscale)
    assert mine[1][0] == mine[0][0]         # the overflowing step changed nothing
    assert [m[1] for m in mine] == [2.0 ** 16, 2.0 ** 16, 2.0 ** 15]


def _source(fn):
    import inspect
    return inspect.getsource(fn)


def test_unscale_divides_the_gradients_once(amp_off):
    amp.init('bfloat16')
    net = gluon.nn.Dense(2, in_units=3, use_bias=False)
    net.initialize(mx.init.Constant(0.5))
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    amp.init_trainer(trainer)
    x = mx.nd.array([[1.0, 2.0, 3.0]])
    with autograd.record():
        loss = net(x).astype('float32').sum()
        with amp.scale_loss(loss, trainer) as scaled:
            scaled.backward()
    assert net.weight.grad().asnumpy()[0, 0] == 2.0 ** 16
    amp.unscale(trainer)
    np.testing.assert_array_equal(net.weight.grad().asnumpy(), [[1, 2, 3], [1, 2, 3]])
    assert trainer._scale == 1.0
    trainer.step(1)
    np.testing.assert_allclose(net.weight.data().asnumpy()[0], [0.4, 0.3, 0.2], rtol=1e-6)


def test_init_trainer_and_scale_loss_errors(amp_off):
    net = gluon.nn.Dense(1, in_units=1)
    net.initialize()
    t = gluon.Trainer(net.collect_params(), 'sgd')
    with pytest.raises(AssertionError, match='did you forget to call amp.init'):
        amp.init_trainer(t)
    amp.init('float16')
    with pytest.raises(AssertionError, match='amp.init_trainer'):
        with amp.scale_loss(mx.nd.ones(1), t):
            pass
    with pytest.raises(TypeError, match='only compatible with Gluon Trainer'):
        amp.init_trainer(mx.optimizer.SGD())
    with pytest.raises(TypeError, match='should be a Gluon Trainer'):
        amp.init_trainer(object())
    with pytest.raises(AssertionError, match='float16 or bfloat16'):
        amp_module._deinit()
        amp.init('float32')


# -- amp.init: operators run with MXNet's casts ---------------------------------------------

def _operator_dtypes(mxmod):
    """The dtype of each of a few operator calls' results, imperatively, after
    amp.init('bfloat16')."""
    nd = mxmod.nd
    x, w, b = nd.ones((2, 3)), nd.ones((4, 3)), nd.zeros((4,))
    y = nd.FullyConnected(x, w, b, num_hidden=4)
    res = {
        'FullyConnected': y,
        'exp': nd.exp(y),
        'softmax': nd.softmax(y),
        'broadcast_add low+fp32': nd.broadcast_add(y, x[:, :1]),
        'elemwise_add low+low': nd.elemwise_add(y, y),
        'relu': nd.relu(y),
        'Activation relu': nd.Activation(y, act_type='relu'),
        'Activation softrelu': nd.Activation(y, act_type='softrelu'),
        'Activation relu again': nd.Activation(y, act_type='relu'),
        'times a number': y * 2,
        'plus': y + nd.ones((2, 4)),
        'Convolution': nd.Convolution(nd.ones((1, 2, 4, 4)), nd.ones((3, 2, 3, 3)),
                                      no_bias=True, kernel=(3, 3), num_filter=3),
        'Flatten': nd.Flatten(y),
        'broadcast_add of int32': nd.broadcast_add(nd.ones((2, 3), dtype='int32'),
                                                   nd.ones((2, 3), dtype='int32')),
    }
    return {k: str(v.dtype) for k, v in res.items()}


def test_init_casts_each_operators_inputs_as_mxnet(amp_off, mxnet_ref):
    ref = json.loads(mxnet_ref(textwrap.dedent('''
        import json, mxnet as mx
        from mxnet.contrib import amp
        amp.init('bfloat16')
        exec(%r)
        print(json.dumps(_operator_dtypes(mx)))
    ''' % textwrap.dedent(_source(_operator_dtypes)))))
    amp.init('bfloat16')
    mine = _operator_dtypes(mx)
    assert mine == ref
    assert mine['FullyConnected'] == mine['Convolution'] == str(amp.bfloat16)
    assert mine['exp'] == mine['Activation softrelu'] == str(np.float32)


def _small_cnn(mxmod, params, data):
    """A small CNN's output and weight gradients, imperatively and hybridized, from the
    parameter file ``params`` and the .npy input ``data``."""
    import numpy
    gluon, autograd = mxmod.gluon, mxmod.autograd
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, 3, in_channels=3), gluon.nn.BatchNorm(in_channels=4),
            gluon.nn.Activation('relu'), gluon.nn.MaxPool2D(), gluon.nn.Flatten(),
            gluon.nn.Dense(5, in_units=36))
    net.load_parameters(params)
    x = mxmod.nd.array(numpy.load(data))
    res = {}
    for mode in ('imperative', 'hybridized'):
        if mode == 'hybridized':
            net.hybridize()
        with autograd.record():
            out = net(x)
            loss = (out.astype('float32') ** 2).sum()
        loss.backward()
        res[mode] = {'dtype': str(out.dtype),
                     'out': out.astype('float32').asnumpy().tolist(),
                     'conv_grad': net[0].weight.grad().asnumpy().tolist(),
                     'conv_grad_dtype': str(net[0].weight.grad().dtype),
                     'dense_grad': net[5].weight.grad().asnumpy().tolist(),
                     'running_mean': net[1].running_mean.data().asnumpy().tolist()}
    return res


def test_init_runs_blocks_in_bfloat16_as_mxnet(amp_off, mxnet_ref, tmp_path):
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, 3, in_channels=3), gluon.nn.BatchNorm(in_channels=4),
            gluon.nn.Activation('relu'), gluon.nn.MaxPool2D(), gluon.nn.Flatten(),
            gluon.nn.Dense(5, in_units=36))
    net.initialize(mx.init.Xavier())
    params, data = str(tmp_path / 'net.params'), str(tmp_path / 'x.npy')
    net.save_parameters(params)
    np.save(data, np.random.RandomState(0).uniform(-1, 1, (2, 3, 8, 8)).astype('float32'))
    ref = json.loads(mxnet_ref(textwrap.dedent('''
        import json, mxnet as mx
        from mxnet.contrib import amp
        amp.init('bfloat16')
        exec(%r)
        print(json.dumps(_small_cnn(mx, %r, %r)))
    ''' % (textwrap.dedent(_source(_small_cnn)), params, data))))
    amp.init('bfloat16')
    mine = _small_cnn(mx, params, data)
    for mode in ('imperative', 'hybridized'):
        m, r = mine[mode], ref[mode]
        assert m['dtype'] == r['dtype'] == str(amp.bfloat16)
        assert m['conv_grad_dtype'] == r['conv_grad_dtype'] == str(np.float32)
        # bfloat16 keeps 8 bits: results agree to its rounding
        for key in ('out', 'conv_grad', 'dense_grad', 'running_mean'):
            np.testing.assert_allclose(m[key], r[key], rtol=3e-2, atol=3e-2, err_msg=key)
    np.testing.assert_allclose(mine['imperative']['out'], mine['hybridized']['out'])


def test_hybridized_code_shows_the_casts(amp_off):
    amp.init('bfloat16')
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(4, in_units=3), gluon.nn.Dense(2, in_units=4))
    net.initialize()
    net.hybridize()
    out = net(mx.nd.ones((2, 3)))
    exp = mx.nd.exp(out)
    assert out.dtype == amp.bfloat16 and exp.dtype == np.float32
    code = net.hybridized_code()
    # the data and both layers' parameters; the second layer's data is already bfloat16
    assert code.count("amp_cast(") == 5, code
    assert "amp_cast(data, dtype='bfloat16')" in code


def test_casts_are_differentiated_and_weights_stay_float32(amp_off):
    amp.init('bfloat16')
    net = gluon.nn.Dense(3, in_units=4)
    net.initialize(mx.init.Constant(0.25))
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 1.0})
    x = mx.nd.array(np.arange(8).reshape(2, 4) / 8.0)
    with autograd.record():
        out = net(x)
        loss = (out.astype('float32') ** 2).sum()
    loss.backward()
    assert out.dtype == amp.bfloat16
    g = net.weight.grad()
    assert g.dtype == np.float32
    # d/dW sum((xW^T+b)^2) = 2 (xW^T+b)^T x (the bias starts at zero), in bfloat16's
    # precision
    y = x.asnumpy() @ np.full((4, 3), 0.25)
    np.testing.assert_allclose(g.asnumpy(), 2 * y.T @ x.asnumpy(), rtol=1e-2)
    trainer.step(1)
    assert net.weight.data().dtype == np.float32
    np.testing.assert_allclose(net.weight.data().asnumpy(), 0.25 - 2 * y.T @ x.asnumpy(),
                               rtol=1e-2)


def test_fast_path_takes_the_casts(amp_off):
    x = mx.nd.ones((2, 2))
    y = mx.nd.ones((2, 2)).astype('bfloat16')
    assert (x + x).dtype == np.float32          # a plan made before amp.init
    assert (x * 2).dtype == np.float32
    amp.init('bfloat16')
    # MXNet's bfloat16 lists run _mul_scalar in float32 and elemwise_add in the widest type
    assert (y * 2).dtype == np.float32
    assert (y + x).dtype == np.float32 and (y + y).dtype == amp.bfloat16
    assert mx.nd.relu(y).dtype == amp.bfloat16          # either type: left as it comes
    amp_module._deinit()
    assert (y * 2).dtype == amp.bfloat16


def test_loss_outputs_gradient_is_scaled(amp_off):
    x = mx.nd.array([[1.0, 2.0]])
    label = mx.nd.array([1])

    def grad():
        x.attach_grad()
        with autograd.record():
            out = mx.nd.SoftmaxOutput(x, label)
        out.backward()
        return x.grad.asnumpy()

    plain = grad()
    amp.init('bfloat16')
    np.testing.assert_allclose(grad(), plain * amp_module._loss_scaler.loss_scale)


@pytest.mark.parametrize('multi_precision', [False, True])
def test_bfloat16_weights_update_through_a_float32_master_copy(multi_precision):
    net = gluon.nn.Dense(1, in_units=1, use_bias=False)
    net.initialize(mx.init.One())
    net.cast('bfloat16')
    trainer = gluon.Trainer(net.collect_params(), 'sgd',
                            {'learning_rate': 1e-3, 'multi_precision': multi_precision})
    x = mx.nd.ones((1, 1)).astype('bfloat16')
    for _ in range(10):
        with autograd.record():
            loss = net(x).astype('float32').sum()
        loss.backward()
        trainer.step(1)
    w = float(net.weight.data().astype('float32').asscalar())
    # each step takes 1e-3 off: under half of bfloat16's spacing at 1 (2**-8), so the weight
    # moves only through the float32 copy, which reaches 0.99, bfloat16's 0.98828125
    assert w == (0.98828125 if multi_precision else 1.0)


def _train_small_cnn(steps=80, batch=32, seed=0):
    """A small CNN trained on ten classes of noisy 8x8 patterns (hybridized, SGD with
    momentum) from fixed weights and batches: its held-out accuracy."""
    rs = np.random.RandomState(seed)
    patterns = rs.randn(10, 1, 8, 8)

    def images(n):
        labels = rs.randint(0, 10, n)
        return (patterns[labels] + 1.5 * rs.randn(n, 1, 8, 8)).astype('float32'), labels

    train_x, train_y = images(steps * batch)
    test_x, test_y = images(500)
    mx.random.seed(seed)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(8, 3, padding=1, in_channels=1), gluon.nn.BatchNorm(in_channels=8),
            gluon.nn.Activation('relu'), gluon.nn.Dense(10, in_units=512))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.05,
                                                          'momentum': 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for i in range(steps):
        x = mx.nd.array(train_x[i * batch:(i + 1) * batch])
        y = mx.nd.array(train_y[i * batch:(i + 1) * batch])
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
    out = net(mx.nd.array(test_x))
    assert out.dtype == (amp.bfloat16 if amp_table.table is not None else np.float32)
    return float((out.astype('float32').asnumpy().argmax(axis=1) == test_y).mean())


def test_bfloat16_training_reaches_float32_accuracy(amp_off):
    fp32 = _train_small_cnn()
    amp.init('bfloat16')
    bf16 = _train_small_cnn()
    assert fp32 > 0.8, fp32
    assert bf16 >= fp32 - 0.03, (bf16, fp32)



class _Residual(gluon.nn.HybridBlock):
    """conv-BN-relu-conv-BN plus the input, relu, pooled, dense: the pieces of ResNet-18."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.conv1 = gluon.nn.Conv2D(6, 3, padding=1, in_channels=1)
        self.bn1 = gluon.nn.BatchNorm(in_channels=6)
        self.conv2 = gluon.nn.Conv2D(6, 3, padding=1, in_channels=6)
        self.bn2 = gluon.nn.BatchNorm(in_channels=6)
        self.pool = gluon.nn.GlobalAvgPool2D()
        self.dense = gluon.nn.Dense(5, in_units=6)

    def hybrid_forward(self, F, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)) + y)
        return self.dense(self.pool(y))


def _torch_residual(arrays, x, labels, autocast):
    """_Residual in torch from the same arrays (collect_params order), one training step's
    gradients and running statistics, under torch.autocast(bfloat16) when ``autocast``."""
    import torch
    tnn = torch.nn
    conv1, conv2 = tnn.Conv2d(1, 6, 3, padding=1), tnn.Conv2d(6, 6, 3, padding=1)
    bn1, bn2, dense = tnn.BatchNorm2d(6), tnn.BatchNorm2d(6), tnn.Linear(6, 5)
    tensors = [conv1.weight, conv1.bias, bn1.weight, bn1.bias, bn1.running_mean,
               bn1.running_var, conv2.weight, conv2.bias, bn2.weight, bn2.bias,
               bn2.running_mean, bn2.running_var, dense.weight, dense.bias]
    with torch.no_grad():
        for t, a in zip(tensors, arrays):
            t.copy_(torch.from_numpy(a))
    bn1.momentum = bn2.momentum = 0.1      # Gluon's 0.9 kept
    with torch.autocast('cpu', dtype=torch.bfloat16, enabled=autocast):
        y = torch.relu(bn1(conv1(torch.from_numpy(x))))
        y = torch.relu(bn2(conv2(y)) + y)
        out = dense(y.mean(dim=(2, 3)))
    loss = tnn.functional.cross_entropy(out.float(), torch.from_numpy(labels).long(),
                                        reduction='sum')
    loss.backward()
    return [t.grad.numpy() if t.requires_grad else t.detach().numpy() for t in tensors]


@pytest.mark.parametrize('hybridize', [False, True])
def test_bfloat16_step_computes_what_torch_autocast_computes(amp_off, hybridize):
    """One training step of a residual block in bfloat16 AMP gives the gradients (and
    BatchNorm's running statistics) of PyTorch's torch.autocast(bfloat16) from the same
    weights (the same bfloat16 kernels: identical here), where float32's convolution weight
    gradients differ by more."""
    rs = np.random.RandomState(0)
    x = rs.randn(16, 1, 6, 6).astype('float32') * 3
    labels = rs.randint(0, 5, 16).astype('float32')
    mx.random.seed(0)
    net = _Residual()
    net.initialize(mx.init.Xavier())
    arrays = [p.data().asnumpy() for p in net.collect_params().values()]
    if hybridize:
        net.hybridize()
    amp.init('bfloat16')
    with autograd.record():
        loss = gluon.loss.SoftmaxCrossEntropyLoss()(net(mx.nd.array(x)), mx.nd.array(labels))
    loss.backward()
    mine = [(p.grad() if p.grad_req != 'null' else p.data()).asnumpy()
            for p in net.collect_params().values()]
    ref = _torch_residual(arrays, x, labels, autocast=True)
    fp32 = _torch_residual(arrays, x, labels, autocast=False)
    names = list(net.collect_params())
    for name, m, r, f in zip(names, mine, ref, fp32):
        if name.endswith('running_var'):
            continue            # MXNet's moving variance is the biased one, torch's unbiased
        if 'conv' in name and name.endswith('bias'):
            continue            # BatchNorm cancels it: its gradient is rounding noise
        scale = np.abs(r).max()
        assert np.abs(m - r).max() <= 2e-3 * scale + 1e-6, name
        if name.endswith('weight') and 'conv' in name:
            # float32's differ by more: the comparison tells the precisions apart
            assert np.abs(f - r).max() > 4e-3 * scale, name


# -- programs compiled before amp.init, the executor's monitor --------------------------------

def test_programs_compiled_before_init_take_the_casts(amp_off):
    """A hybridized block, a CachedOp and an executor compiled in float32 run with the casts
    once amp.init has run (each program is for the table in force), and in float32 again
    without it."""
    x = mx.nd.ones((2, 3))
    net = gluon.nn.Dense(4, in_units=3)
    net.initialize()
    net.hybridize()
    sym = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=4, name='fc')
    op = mx.sym.CachedOp(sym)
    ex = sym.simple_bind(mx.cpu(), grad_req='null', data=(2, 3))
    args = [x, net.weight.data(), net.bias.data()]

    def dtypes():
        return [net(x).dtype, op(*args).dtype, ex.forward()[0].dtype]

    assert dtypes() == [np.float32] * 3
    assert 'amp_cast' not in net.hybridized_code()
    amp.init('bfloat16')
    assert dtypes() == [amp.bfloat16] * 3
    assert net.hybridized_code().count('amp_cast(') == 3
    amp_module._deinit()
    assert dtypes() == [np.float32] * 3


def test_executor_monitor_sees_the_casts(amp_off):
    """The monitored forward pass runs the graph the unmonitored one runs, the casts
    included: MXNet reports (for a graph built after amp.init) amp_cast0..2, fc_output,
    amp_cast3, e_output; here the casts are named after the operator that reads them."""
    amp.init('bfloat16')
    sym = mx.sym.exp(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc'),
                     name='e')
    x = mx.nd.array(np.arange(8).reshape(2, 4) / 8.0)
    w = mx.nd.array(np.linspace(-1, 1, 12).reshape(3, 4))
    ex = sym.bind(mx.cpu(), {'data': x, 'fc_weight': w, 'fc_bias': mx.nd.zeros((3,))})
    plain = ex.forward()[0].asnumpy()
    seen = {}
    ex.set_monitor_callback(lambda name, arr: seen.setdefault(name, arr))
    out = ex.forward()[0]
    assert list(seen) == ['fc_amp_cast0_output', 'fc_amp_cast1_output', 'fc_amp_cast2_output',
                          'fc_output', 'e_amp_cast0_output', 'e_output']
    assert seen['fc_output'].dtype == amp.bfloat16 and seen['e_output'].dtype == np.float32
    np.testing.assert_array_equal(out.asnumpy(), plain)
    # the bfloat16 product, not the float32 one
    exact = x.asnumpy() @ w.asnumpy().T
    assert np.abs(seen['fc_output'].astype('float32').asnumpy() - exact).max() > 1e-4


def test_main_job_trains_in_bfloat16(amp_off):
    """``python -m neomx.examples.train --amp bfloat16``: the same LeNet run reaches the
    float32 run's test accuracy."""
    from neomx.examples import train
    args = ['--model', 'lenet', '--data', 'digits', '--epochs', '2', '--batch-size', '32',
            '--lr', '0.3', '--test-size', '300', '--no-progress']
    fp32 = train.main(args)['lenet'][-1]['test_acc']
    bf16 = train.main(args + ['--amp', 'bfloat16'])['lenet'][-1]['test_acc']
    assert amp_table.table is not None and amp_table.table.target == 'bfloat16'
    assert fp32 > 0.8, fp32
    assert bf16 >= fp32 - 0.05, (bf16, fp32)
