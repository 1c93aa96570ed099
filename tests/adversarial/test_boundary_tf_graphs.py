"""TensorFlow 1 graph mode across the boundary (recommenders' RBM: tf.compat.v1
placeholders, Variables, an optimizer and a Session kept on `self`).

The repository's class builds its graph in the judge; a target method runs in the solution
process on a mirror of that graph and what it adds comes back as nodes the judge imports
into its own graph (Variables and optimizer slots with them, and the collections they
joined); the Session stays the judge's (a handle). A solution that adds a node able to run
code or touch files in the judge (PyFunc, WriteFile) is refused: the run is tampered and
the node never enters the judge's graph.

Needs TensorFlow in the interpreter that runs the suite: the `test` extra installs
tensorflow-cpu; without it the file fails (a skip only where skips are allowed).
"""

from __future__ import annotations

import textwrap

import pytest
from execution_support import engine_fixture, repo_job, write_repo
from requirements_support import installed_or_fail

installed_or_fail("tensorflow")

engine = engine_fixture(("strong",))

MODEL = textwrap.dedent("""\
    import numpy as np
    import tensorflow as tf

    tf.compat.v1.disable_eager_execution()


    class Model:
        def __init__(self, n_in=4, n_out=3, seed=0):
            tf.compat.v1.reset_default_graph()
            tf.compat.v1.set_random_seed(seed)
            self.x = tf.compat.v1.placeholder(tf.float32, [None, n_in], name="x")
            with tf.compat.v1.variable_scope("params"):
                self.w = tf.compat.v1.get_variable(
                    "w", [n_in, n_out], initializer=tf.compat.v1.constant_initializer(0.5))
                self.b = tf.compat.v1.get_variable(
                    "b", [1, n_out], initializer=tf.compat.v1.zeros_initializer())
            self.table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(
                    tf.constant([0, 1, 2]), tf.constant([10.0, 20.0, 30.0])), -1.0)
            self.out = self.forward(self.x)
            self.loss = tf.reduce_mean(input_tensor=tf.square(self.out - 0.2))
            self.make_optimizer()
            self.config = tf.compat.v1.ConfigProto(allow_soft_placement=True)
            self.sess = tf.compat.v1.Session(config=self.config)
            self.sess.run(tf.compat.v1.global_variables_initializer())
            self.sess.run(tf.compat.v1.tables_initializer())

        def forward(self, v):
            return tf.nn.sigmoid(tf.matmul(v, self.w) + self.b)

        def make_optimizer(self):
            self.opt = tf.compat.v1.train.AdamOptimizer(learning_rate=0.1).minimize(
                loss=self.loss)

        def rated(self, ids):
            return self.table.lookup(tf.cast(ids, tf.int32)) * 2.0

        def train(self, data, steps):
            for _ in range(steps):
                self.sess.run(self.opt, feed_dict={self.x: data})
            return self.sess.run(self.loss, feed_dict={self.x: data})

        def save(self, path):
            return tf.compat.v1.train.Saver().save(self.sess, path)

        def load(self, path):
            tf.compat.v1.train.Saver().restore(self.sess, path)
    """)
TESTS = textwrap.dedent("""\
    import numpy as np

    from pkg.model import Model

    DATA = np.ones((2, 4), dtype=np.float32)


    def test_forward():
        model = Model()
        out = model.sess.run(model.forward(model.x), feed_dict={model.x: DATA})
        np.testing.assert_allclose(out, np.full((2, 3), 1 / (1 + np.exp(-2.0))), rtol=1e-5)
        assert model.w.shape == [4, 3]


    def test_training_lowers_the_loss():
        model = Model()
        before = model.sess.run(model.loss, feed_dict={model.x: DATA})
        after = model.train(DATA, 20)
        assert after < before / 2
        names = {v.name for v in model.sess.graph.get_collection("variables")}
        assert "params/w/Adam:0" in names


    def test_save_load(tmp_path):
        model = Model()
        trained = model.train(DATA, 5)
        path = model.save(str(tmp_path / "model.ckpt"))
        other = Model()
        assert other.sess.run(other.loss, feed_dict={other.x: DATA}) > trained
        other.load(path)
        np.testing.assert_allclose(other.sess.run(other.w), model.sess.run(model.w))
        assert other.sess.run(other.loss, feed_dict={other.x: DATA}) == trained


    def test_rated():
        model = Model()
        ids = model.sess.graph.get_tensor_by_name("x:0")[:, 0]
        rated = model.sess.run(model.rated(ids), feed_dict={model.x: DATA * 2})
        np.testing.assert_allclose(rated, [60.0, 60.0])
    """)
TEST_IDS = ["tests/test_model.py"]


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """One repository for the module: its warm workers (TensorFlow imported once per
    slot) serve every run."""
    return write_repo(tmp_path_factory.mktemp("tf_graphs") / "repo",
                      {"pkg/__init__.py": "", "pkg/model.py": MODEL,
                       "tests/test_model.py": TESTS})


def job(repo, text, symbol, reference=False, preload=True):
    made = repo_job(repo, "pkg/model.py", text, TEST_IDS[0], symbol, reference,
                    problem_id=symbol.replace(".", "_"))
    made.node_ids = list(TEST_IDS)
    # imported once by the warm worker, as an environment's runtime dependencies are;
    # without it (recommenders' environment gets TensorFlow as an extra it does not
    # preload) TensorFlow is none of the run's libraries until a graph crosses
    made.env_preload = ["tensorflow"] if preload else []
    made.limits.timeout_s = 300         # TensorFlow's import alone can take a minute
    return made


def in_order(engine, jobs):
    results = {r.job_id: r for r in engine.run(jobs)}
    return [results[j.job_id] for j in jobs]


FORWARD = "return tf.nn.sigmoid(tf.matmul(v, self.w) + self.b)"
OPTIMIZER = "self.opt = tf.compat.v1.train.AdamOptimizer(learning_rate=0.1).minimize("


def test_graph_mode_methods_cross_and_are_judged(engine, repo):
    """The forward method builds ops from self's Variables and an argument in the mirror;
    make_optimizer creates Adam's slots and the train op there (the test's
    global_variables_initializer initializes them in the judge, and they are in its
    global_variables); train runs the judge's Session through its handle, and rated the
    judge's lookup table through its (the lookup's op, built in the judge's graph, comes
    back to the mirror by name); the session's
    ConfigProto on `self` crosses back as TensorFlow's value, also in a run whose
    libraries did not include TensorFlow. Before, each was a symbolic tensor that
    "cannot cross"."""
    wrong_forward = MODEL.replace(FORWARD, FORWARD.replace("sigmoid", "tanh"))
    wrong_optimizer = MODEL.replace(OPTIMIZER, OPTIMIZER.replace("0.1", "-0.1"))
    wrong_train = MODEL.replace("for _ in range(steps):", "for _ in range(0):")
    jobs = [job(repo, MODEL, "Model.forward", reference=True),
            job(repo, wrong_forward, "Model.forward"),
            job(repo, MODEL, "Model.make_optimizer", reference=True),
            job(repo, wrong_optimizer, "Model.make_optimizer"),
            job(repo, MODEL, "Model.train", reference=True),
            job(repo, wrong_train, "Model.train"),
            job(repo, MODEL, "Model.rated", reference=True),
            job(repo, MODEL.replace("* 2.0", "* 3.0"), "Model.rated"),
            job(repo, MODEL, "Model.forward", reference=True, preload=False)]
    results = in_order(engine, jobs)
    for result in results[::2]:
        assert result.outcome == "passed", (result.problem_id, result.reason,
                                            result.stdout[-3000:])
    for result in results[1:-1:2]:
        assert result.outcome == "failed", (result.problem_id, result.reason,
                                            result.stdout[-3000:])


def test_a_saver_restores_in_the_solution_process(engine, repo):
    """recommenders' RBM.load: a tf.compat.v1.train.Saver built by the target in the
    mirror has checkpoint ops (SaveV2, RestoreV2), which read and write files. They enter
    the judge's graph as stand-ins that run nothing; Saver.restore's run of the judge's
    Session (a handle posing as a Session: Saver checks) reads the checkpoint the test
    wrote in the solution process and the judge's session assigns what it read to the
    judge's Variables. Before, the run was tampered ("nodes whose ops reach outside the
    session"). A restore of the wrong variables fails."""
    wrong = MODEL.replace("tf.compat.v1.train.Saver().restore(",
                          "tf.compat.v1.train.Saver(var_list=[self.b]).restore(")
    results = in_order(engine, [job(repo, MODEL, "Model.load", reference=True),
                                job(repo, wrong, "Model.load")])
    assert [r.outcome for r in results] == ["passed", "failed"], [
        (r.outcome, r.reason, r.stdout[-3000:]) for r in results]


def test_checkpoint_ops_enter_the_judges_graph_as_stand_ins():
    """A checkpoint op is allowed as a node (never in a function, whose body the judge's
    session would run); the judge imports a stand-in of its name and outputs that fails
    unless fed, and fed, gives what was fed (a control edge on one is satisfied by its
    feed): the judge's session never reads or writes a checkpoint."""
    import numpy as np
    import tensorflow as tf

    from curator.execution import tf_graphs

    graph = tf.Graph()
    with graph.as_default():
        w = tf.compat.v1.get_variable("w", [2], initializer=tf.compat.v1.ones_initializer())
        saver = tf.compat.v1.train.Saver()
    graph_def = graph.as_graph_def()
    assert tf_graphs.refused_nodes(graph_def, tf.Graph()) == []
    tf_graphs.with_stand_ins(graph_def)
    ops = {node.name: node.op for node in graph_def.node}
    assert ops["save/SaveV2"] == "Placeholder" and ops["save/RestoreV2"] == "Placeholder"
    assert not set(ops.values()) & tf_graphs.LOCAL_OPS
    judge = tf.Graph()
    with judge.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
        with tf.compat.v1.Session() as session:
            session.run(w.initializer.name)
            definition = saver.saver_def
            for fetch in (definition.save_tensor_name, definition.restore_op_name):
                with pytest.raises(tf.errors.InvalidArgumentError, match="must feed"):
                    session.run(fetch, {definition.filename_tensor_name: "judge.ckpt"})
            assert session.run(definition.save_tensor_name, {
                definition.filename_tensor_name: "x", "save/SaveV2:0": False}) == b"x"
            session.run(definition.restore_op_name,
                        {"save/RestoreV2:0": np.array([3.0, 4.0], np.float32)})
            np.testing.assert_allclose(session.run("w/Read/ReadVariableOp:0"), [3.0, 4.0])

    @tf.function
    def saving(v):
        tf.raw_ops.SaveV2(prefix="f", tensor_names=["v"], shape_and_slices=[""],
                          tensors=[v])
        return v

    definition = saving.get_concrete_function(tf.TensorSpec([2], tf.float32)).function_def
    graph_def = tf.compat.v1.GraphDef()
    graph_def.library.function.add().CopyFrom(definition)
    refused = tf_graphs.refused_nodes(graph_def, graph)
    assert any(item.startswith("SaveV2") for item in refused), refused


ATTACKS = {
    # the expected answer computed by Python in the judge's session
    "py_func": FORWARD.replace(
        "return ", "out = ") + "\n        return tf.compat.v1.py_func(\n"
    "            lambda a: np.full((2, 3), 1 / (1 + np.exp(-2.0)), np.float32),\n"
    "            [out], tf.float32)",
    # a file written by the judge's session when the test runs the result
    "write_file": "with tf.control_dependencies([tf.io.write_file('written', 'x')]):\n"
    "            return tf.identity(" + FORWARD[len("return "):] + ")",
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_nodes_that_reach_outside_the_session_are_refused(engine, repo, attack):
    text = MODEL.replace(FORWARD, ATTACKS[attack])
    assert text != MODEL
    (result,) = in_order(engine, [job(repo, text, "Model.forward")])
    assert result.outcome == "tampered", (result.outcome, result.reason,
                                          result.stdout[-3000:])
    assert "TensorFlow graph nodes whose ops reach outside the session" in result.reason


def test_a_function_the_nodes_define_is_checked_too():
    """A node that calls a function (PartitionedCall, If, While: control flow v2 in graph
    mode) runs that function's body in the judge's session: the functions the nodes bring
    are checked as the nodes are, and a call of a function defined nowhere is refused
    (the judge's own functions are its own)."""
    import tensorflow as tf

    from curator.execution import tf_graphs

    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [2], name="x")

    @tf.function
    def clean(v):
        return v * 2.0

    @tf.function
    def written(v):
        tf.io.write_file("written", "x")
        return v

    def nodes_of(function):
        definition = function.get_concrete_function(
            tf.TensorSpec([2], tf.float32)).function_def
        graph_def = tf.compat.v1.GraphDef()
        graph_def.library.function.add().CopyFrom(definition)
        call = graph_def.node.add()
        call.name, call.op = "call", "PartitionedCall"
        call.input.append(x.name)
        call.attr["f"].func.name = definition.signature.name
        return graph_def, definition.signature.name

    graph_def, _ = nodes_of(clean)
    assert tf_graphs.refused_nodes(graph_def, graph) == []
    graph_def, name = nodes_of(written)
    refused = tf_graphs.refused_nodes(graph_def, graph)
    assert any(item.startswith("WriteFile") and name in item for item in refused), refused
    graph_def, name = nodes_of(clean)
    del graph_def.library.function[:]
    assert tf_graphs.refused_nodes(graph_def, graph) == [
        "a call of function %s (call)" % name]
