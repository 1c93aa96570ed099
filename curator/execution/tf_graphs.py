"""TensorFlow 1 graphs across the boundary (graph mode: tf.compat.v1's placeholders,
Variables and Sessions).

A `tf.Graph` of the judge crosses as data: the NodeDefs (protobuf, no code) and the
collection items it holds that the solution process has not seen yet. The solution process
imports them into a *mirror* graph of its own, one per judge graph, so both graphs hold
the same nodes under the same names; graph tensors, operations and Variables then cross
as references by name into the other side's graph. What the solution adds to its mirror
(the ops a method builds, the variables and optimizer slots it makes, and what it adds
to the graph's collections) comes back the same way with the next message that names the
graph, and the judge imports it into its own graph after checking every node's op type
against `ALLOWED_OPS` (pure computation, variables and tables in the session's memory,
control flow): an op that can run Python, read or write files, or reach another process
(PyFunc, ReadFile, WriteFile, readers, file datasets, PrintV2, RemoteCall) makes the run
`tampered`; a Saver's checkpoint ops enter as stand-ins that run nothing and run in the
solution process when it asks the judge's Session for them (LOCAL_OPS, SessionRun). Variables are rebuilt on either side from their VariableDef by
TensorFlow's own code. Nothing here runs the solution's code in the judge: a node is data
until the judge's own session runs it, and the judge only runs allowed ops.

TensorFlow objects that hold a graph's elements but are no element themselves (a
Session, a tf.data Dataset or Iterator, a lookup table) cross as judge handles: their
methods run in the judge on the judge's graph (a Session's `run` computes what the test's
session computes).
"""

import sys

# op-definition modules whose ops compute in the session's memory only (maths, arrays,
# neural-network kernels, random numbers, variables, lookup tables, control flow, the
# optimizers' apply ops). Anything registered elsewhere (io: files and checkpoints;
# script: Python; logging: printing to streams or files; datasets: readers of files;
# collectives, rpc, debug, summaries) is refused.
ALLOWED_OP_MODULES = (
    "gen_array_ops", "gen_math_ops", "gen_nn_ops", "gen_random_ops",
    "gen_stateless_random_ops", "gen_stateless_random_ops_v2", "gen_stateful_random_ops",
    "gen_resource_variable_ops", "gen_state_ops", "gen_control_flow_ops",
    "gen_functional_ops", "gen_training_ops", "gen_lookup_ops", "gen_linalg_ops",
    "gen_bitwise_ops", "gen_sparse_ops", "gen_spectral_ops", "gen_special_math_ops",
    "gen_image_ops", "gen_string_ops", "gen_set_ops", "gen_list_ops", "gen_data_flow_ops",
    "gen_manip_ops", "gen_ctc_ops", "gen_candidate_sampling_ops")
# ops of those modules that reach outside the session's memory: a file mapped into memory,
# a table read from a text file, records read from files, a function run on another device
# or process
DENIED_OPS = frozenset({"ImmutableConst", "InitializeTableFromTextFile",
                        "InitializeTableFromTextFileV2", "InitializeTableFromDataset",
                        "RecordInput", "RemoteCall"})
# ops of other modules that compute only: an assertion's check (tf.debugging), a no-op, a
# sharded checkpoint's file names (strings from strings)
EXTRA_OPS = frozenset({"Assert", "NoOp", "ShardedFilename", "ShardedFilespec"})
# the checkpoint ops a tf.compat.v1.train.Saver builds (gen_io_ops): they read and write
# the checkpoint files it names, which are the solution process's. They never enter the
# judge's graph: the judge imports a *stand-in* of the same name and outputs instead
# (`with_stand_ins`: a Placeholder, or an IdentityN over a Placeholder per output), which
# fails when the judge's session runs it unfed; a run the solution process asks of a
# judge's Session that needs one runs the checkpoint ops in the solution process's own
# session on its mirror, on the values the judge's session gives their inputs, and feeds
# what they give to their stand-ins (`SessionRun`). Only as graph nodes: inside a function
# (whose body the judge's session would run) they are refused as before.
LOCAL_OPS = frozenset({"SaveV2", "RestoreV2", "MergeV2Checkpoints", "Save", "SaveSlices",
                       "Restore", "RestoreSlice"})
STAND_IN = "/_curator_stand_in_%d"
# collections whose items cross (their Variables, Tensors and Operations; other kinds of
# item, a cond context's proto, stay on their side)
_ITEM_KINDS = ("v", "t", "o")

_ALLOWED = []


def tf_loaded():
    return "tensorflow.python.framework.ops" in sys.modules


def _ops():
    return sys.modules["tensorflow.python.framework.ops"]


def allowed_ops():
    """The op types a solution may add to a judge graph (see ALLOWED_OP_MODULES)."""
    if _ALLOWED:
        return _ALLOWED[0]
    import importlib
    names = set(EXTRA_OPS)
    try:
        from tensorflow.python.framework import op_def_registry
        registered = op_def_registry
    except ImportError:   # pragma: no cover - every TensorFlow 2 has it
        registered = None
    for module_name in ALLOWED_OP_MODULES:
        try:
            module = importlib.import_module("tensorflow.python.ops." + module_name)
        except ImportError:
            continue
        for attribute in dir(module):
            # a gen module's op wrappers: CamelCase, the op's own name (its snake_case
            # twins and _eager_fallback helpers are not op names)
            if not attribute[:1].isupper() or attribute.endswith("_Output"):
                continue
            if registered is not None and registered.get(attribute) is None:
                continue
            names.add(attribute)
    _ALLOWED.append(frozenset(names - DENIED_OPS))
    return _ALLOWED[0]


def _func_graph_class():
    module = sys.modules.get("tensorflow.python.framework.func_graph")
    return getattr(module, "FuncGraph", None)


def plain_graph(graph):
    """A TensorFlow 1 graph: a tf.Graph that is not a tf.function's FuncGraph."""
    graph_class = getattr(_ops(), "Graph", None)
    if graph_class is None or not isinstance(graph, graph_class):
        return False
    func_graph = _func_graph_class()
    return func_graph is None or not isinstance(graph, func_graph)


def _variable_class():
    module = sys.modules.get("tensorflow.python.ops.variables")
    return getattr(module, "Variable", None)


def element_kind(obj):
    """'g', 't', 'o' or 'v' for a plain graph, a graph tensor, an operation or a graph
    Variable; None for anything else (an eager tensor, a tf.function's tensor)."""
    ops = _ops()
    graph_class, operation = getattr(ops, "Graph", None), getattr(ops, "Operation", None)
    if graph_class is None or operation is None:
        return None   # not TensorFlow's own framework
    if isinstance(obj, graph_class):
        return "g" if plain_graph(obj) else None
    if isinstance(obj, operation):
        return "o" if plain_graph(obj.graph) else None
    variable = _variable_class()
    if variable is not None and isinstance(obj, variable):
        try:
            graph = obj.graph
        except Exception:
            return None
        return "v" if plain_graph(graph) else None
    if isinstance(obj, _graph_tensor_classes(ops)):
        try:
            graph = obj.graph
        except Exception:
            return None
        return "t" if plain_graph(graph) else None
    return None


def _graph_tensor_classes(ops):
    """A graph's tensor classes: SymbolicTensor (TensorFlow 2.14 and later, in ops or
    framework.tensor), else Tensor but for eager tensors."""
    found = getattr(ops, "SymbolicTensor", None)
    if found is None:
        module = sys.modules.get("tensorflow.python.framework.tensor")
        found = getattr(module, "SymbolicTensor", None)
    if found is not None:
        return (found,)
    tensor = getattr(ops, "Tensor", None)
    eager = getattr(ops, "EagerTensor", None) or getattr(ops, "_EagerTensorBase", None)
    if tensor is None:
        return ()
    return (tensor,) if eager is None else tuple(
        cls for cls in (tensor,) if not issubclass(cls, eager))


def holds_graph_elements(obj, depth=2):
    """A TensorFlow object that is no graph element but holds a plain graph's (a Session,
    a graph-mode Dataset, Iterator or lookup table): it crosses as a judge handle."""
    namespace = getattr(obj, "__dict__", None)
    if not isinstance(namespace, dict):
        return False
    for value in list(namespace.values())[:200]:
        if type(value).__module__.startswith("tensorflow.") and element_kind(value):
            return True
        if depth > 1 and type(value).__module__.startswith("tensorflow.") and \
                holds_graph_elements(value, depth - 1):
            return True
    return False


def default_graph():
    """The judge's default graph when it builds graphs (graph mode, not a tf.function's
    trace): the solution builds in its mirror of it. None otherwise."""
    if not tf_loaded():
        return None
    try:
        from tensorflow.python.eager import context
        if context.executing_eagerly():
            return None
        graph = _ops().get_default_graph()
    except Exception:
        return None
    return graph if plain_graph(graph) else None


class GraphSync:
    """One side's record of the graphs both sides hold: gid -> graph (the judge's own, or
    the solution's mirror), the graph's version and collection sizes the other side has
    seen, and the Variables by name (the same object each time one crosses)."""

    def __init__(self):
        self.graphs = {}      # gid -> graph
        self.gids = {}        # id(graph) -> gid
        self.version = {}     # gid -> (op count, last op id) the other side holds
        self.collections = {}  # gid -> {key: items the other side holds}
        self.functions = {}   # gid -> names of functions the other side holds
        self.variables = {}   # gid -> {name: Variable}

    def gid_of(self, graph, make=True):
        gid = self.gids.get(id(graph))
        if gid is not None and self.graphs.get(gid) is graph:
            return gid
        if not make:
            return None
        gid = len(self.graphs) + 1
        while gid in self.graphs:
            gid += 1
        self.adopt(gid, graph)
        return gid

    def adopt(self, gid, graph):
        """graph is gid's (kept alive: an id is never reused meanwhile); nothing of it is
        known to the other side yet."""
        self.graphs[gid] = graph
        self.gids[id(graph)] = gid
        self.version[gid] = (0, 0)
        self.collections[gid] = {}
        self.functions[gid] = set()
        self.variables[gid] = {}

    # -- sending
    def delta(self, gid):
        """What the other side lacks of graph gid: None, or (GraphDef bytes of the new
        nodes and functions, [(collection, kind, name, VariableDef bytes)], seed)."""
        graph = self.graphs[gid]
        version = graph.version   # how many ops it holds (they are never removed)
        known, last_id = self.version[gid]
        functions = getattr(graph, "_functions", {}) or {}
        new_functions = [name for name in list(functions) if name not in self.functions[gid]]
        items = self._new_collection_items(gid, graph)
        if version == known and not new_functions and not items:
            return None
        from tensorflow.core.framework import graph_pb2
        graph_def = graph_pb2.GraphDef()
        graph_def.versions.CopyFrom(graph.graph_def_versions)
        new_ops = sorted((op_id, op) for op_id, op in _ops_by_id(graph) if op_id > last_id)
        for _, op in new_ops:
            graph_def.node.add().CopyFrom(op.node_def)
        for name in new_functions:
            definition = getattr(functions[name], "definition", None)
            if definition is not None:
                graph_def.library.function.add().CopyFrom(definition)
            self.functions[gid].add(name)
        self.version[gid] = (version, max([last_id] + [op_id for op_id, _ in new_ops]))
        return graph_def.SerializeToString(), items, graph.seed

    def _new_collection_items(self, gid, graph):
        seen = self.collections[gid]
        out = []
        for key in graph.get_all_collection_keys():
            if not isinstance(key, str):
                continue
            items = graph.get_collection(key)
            start = seen.get(key, 0)
            if len(items) == start:
                continue
            for item in items[start:]:
                kind = element_kind(item)
                if kind == "v":
                    self.variables[gid].setdefault(item.name, item)
                    out.append((key, "v", item.name, item.to_proto().SerializeToString()))
                elif kind in ("t", "o"):
                    out.append((key, kind, item.name, None))
            seen[key] = len(items)
        return out

    def variable_def(self, gid, variable):
        self.variables[gid].setdefault(variable.name, variable)
        return variable.to_proto().SerializeToString()

    # -- receiving
    def receive(self, gid, graph, delta, check=None):
        """Import what the other side sent into `graph`. `check(graph_def, graph)` refuses
        what must not enter (the judge's allow-list); where it is given, checkpoint ops
        enter as their stand-ins (`with_stand_ins`)."""
        graph_def_bytes, items, seed = delta
        from tensorflow.core.framework import graph_pb2
        graph_def = graph_pb2.GraphDef()
        graph_def.ParseFromString(bytes(graph_def_bytes))
        if check is not None:
            check(graph_def, graph)
            with_stand_ins(graph_def)
        if graph_def.node or graph_def.library.function:
            _import_nodes(graph, graph_def)
        for function in graph_def.library.function:
            self.functions[gid].add(function.signature.name)
        if seed is not None and graph.seed is None and isinstance(seed, int):
            graph.seed = seed
        for key, kind, name, variable_def in items:
            if kind not in _ITEM_KINDS or not isinstance(key, str):
                continue
            value = self.element(gid, graph, kind, name, variable_def)
            if value not in graph.get_collection(key):
                graph.add_to_collection(key, value)
        self.version[gid] = (graph.version, max([0] + [i for i, _ in _ops_by_id(graph)]))
        self.collections[gid] = {key: len(graph.get_collection(key))
                                 for key in graph.get_all_collection_keys()
                                 if isinstance(key, str)}

    def element(self, gid, graph, kind, name, variable_def=None):
        name = str(name)
        if kind == "t":
            return graph.get_tensor_by_name(name)
        if kind == "o":
            return graph.get_operation_by_name(name)
        known = self.variables[gid].get(name)
        if known is not None:
            return known
        for key in ("variables", "local_variables", "trainable_variables"):
            for item in graph.get_collection(key):
                if element_kind(item) == "v" and item.name == name:
                    self.variables[gid][name] = item
                    return item
        if variable_def is None:
            raise KeyError("no variable %s in the graph" % name)
        from tensorflow.core.framework import variable_pb2
        proto = variable_pb2.VariableDef()
        proto.ParseFromString(bytes(variable_def))
        with graph.as_default():
            variable = _variable_from_proto(proto)
        self.variables[gid][name] = variable
        return variable


def _ops_by_id(graph):
    """(id, op) of every op of the graph; ids grow as ops are added."""
    nodes = getattr(graph, "_nodes_by_id", None)
    if nodes is not None:
        return list(nodes.items())
    return list(enumerate(graph.get_operations(), 1))   # pragma: no cover


def _variable_from_proto(proto):
    from tensorflow.python.ops import resource_variable_ops, variables
    if proto.is_resource:
        return resource_variable_ops.ResourceVariable(variable_def=proto)
    return variables.RefVariable(variable_def=proto)   # pragma: no cover - TF1 variables


def _import_nodes(graph, graph_def):
    """Add graph_def's nodes to graph under their own names: their inputs that are not in
    graph_def are the graph's own nodes of those names (control inputs on those are added
    after the import: TensorFlow's importer maps only tensors under an empty prefix)."""
    from tensorflow.python.framework import importer
    new = {node.name for node in graph_def.node}
    input_map, controls = {}, []
    for node in graph_def.node:
        if node.name in graph._nodes_by_name:
            raise ValueError("a node named %s exists already" % node.name)
        kept = []
        for name in node.input:
            if name.startswith("^"):
                if name[1:] in new:
                    kept.append(name)
                else:
                    controls.append((node.name, graph.get_operation_by_name(name[1:])))
                continue
            kept.append(name)
            if name.split(":")[0] not in new and name not in input_map:
                input_map[name] = graph.get_tensor_by_name(name if ":" in name else
                                                           name + ":0")
        if len(kept) != len(node.input):
            del node.input[:]
            node.input.extend(kept)
    with graph.as_default():
        # colocation with the graph's own nodes ("loc:@w": an optimizer's slot beside its
        # variable) names nodes outside graph_def, which the graph has
        importer._import_graph_def_internal(graph_def, input_map=input_map or None, name="",
                                            validate_colocation_constraints=False)
    for node in graph_def.node:
        if node.name not in graph._nodes_by_name:
            raise ValueError("a node named %s was renamed on import" % node.name)
    for name, control in controls:
        graph.get_operation_by_name(name)._add_control_input(control)


def refused_nodes(graph_def, graph):
    """The nodes (and nodes of functions) of graph_def whose op is not allowed, and
    function references to functions neither graph_def nor the graph defines. A
    checkpoint op (LOCAL_OPS) is allowed as a node of the graph, never in a function."""
    allowed = allowed_ops()
    defined = {f.signature.name for f in graph_def.library.function}
    existing = set(getattr(graph, "_functions", {}) or {})
    bad = []

    def check(node, where):
        if node.op in LOCAL_OPS and not where:
            return   # replaced by its stand-in (with_stand_ins): the judge never runs it
        if node.op not in allowed and node.op not in defined:
            bad.append("%s (%s%s)" % (node.op, node.name, where))
        for attr in node.attr.values():
            names = []
            if attr.HasField("func"):
                names.append(attr.func.name)
            if attr.HasField("list"):
                names.extend(f.name for f in attr.list.func)
            for name in names:
                if name not in defined and name not in existing:
                    bad.append("a call of function %s (%s%s)" % (name, node.name, where))
        if node.op in defined and node.op not in allowed:
            pass   # a call of a function of the message: its body is checked below

    for node in graph_def.node:
        check(node, "")
    for function in graph_def.library.function:
        for node in function.node_def:
            check(node, " in function %s" % function.signature.name)
    return bad


# -- checkpoint ops: run in the solution process, stand-ins in the judge's graph

def _output_types(node):
    """The DataTypes of a node's outputs, from its op's definition."""
    from tensorflow.python.framework import op_def_registry
    op_def = op_def_registry.get(node.op)
    types = []
    for arg in op_def.output_arg:
        if arg.type_list_attr:
            types.extend(node.attr[arg.type_list_attr].list.type)
            continue
        dtype = node.attr[arg.type_attr].type if arg.type_attr else arg.type
        types.extend([dtype] * (node.attr[arg.number_attr].i if arg.number_attr else 1))
    return types


def with_stand_ins(graph_def):
    """graph_def (checked: refused_nodes) with each checkpoint op (LOCAL_OPS) replaced by a
    node of the same name and outputs that computes nothing and fails unless fed: a
    Placeholder for an op of one output, or of none (a bool: TensorFlow moves the control
    edges of a fed Placeholder to its feed), an IdentityN over one Placeholder per output
    for more. Its inputs, the filename and the tensors a SaveV2 writes, are dropped."""
    from tensorflow.core.framework import types_pb2
    nodes = list(graph_def.node)
    if not any(node.op in LOCAL_OPS for node in nodes):
        return graph_def
    del graph_def.node[:]

    def placeholder(name, dtype):
        made = graph_def.node.add()
        made.name, made.op = name, "Placeholder"
        made.attr["dtype"].type = dtype
        made.attr["shape"].shape.unknown_rank = True

    for node in nodes:
        if node.op not in LOCAL_OPS:
            graph_def.node.add().CopyFrom(node)
            continue
        types = _output_types(node)
        if len(types) <= 1:
            placeholder(node.name, types[0] if types else types_pb2.DT_BOOL)
            continue
        names = [node.name + STAND_IN % index for index in range(len(types))]
        for name, dtype in zip(names, types):
            placeholder(name, dtype)
        made = graph_def.node.add()
        made.name, made.op = node.name, "IdentityN"
        made.input.extend(names)
        made.attr["T"].list.type.extend(types)
    return graph_def


def is_session(obj):
    """A TensorFlow 1 Session (graph mode): its handle poses as its class, so TensorFlow's
    own `isinstance(sess, SessionInterface)` (Saver.save) holds in the solution process."""
    if not tf_loaded():
        return False
    module = sys.modules.get("tensorflow.python.client.session")
    interface = getattr(module, "SessionInterface", None)
    return interface is not None and isinstance(obj, interface)


def is_session_class(cls):
    module = sys.modules.get("tensorflow.python.client.session")
    interface = getattr(module, "SessionInterface", None)
    return isinstance(cls, type) and interface is not None and issubclass(cls, interface)


class SessionRun:
    """In the solution process: a run of a judge's Session (through its handle) that needs
    checkpoint ops of the solution's mirror (LOCAL_OPS, stand-ins in the judge's graph).

    The judge's session computes their inputs (the Variables a SaveV2 writes, its
    filename); this process's own session on the mirror runs them with those inputs fed
    (the files are this process's); the judge's session then runs what was asked with
    their outputs fed to their stand-ins (a RestoreV2's values to the assign ops of the
    judge's Variables). What crosses is data both ways; the judge never runs a checkpoint
    op. Runs that need none, and every run before a checkpoint op was built, are the
    judge's plain `run`."""

    def __init__(self, sync):
        self.sync = sync
        self.sessions = {}   # gid -> this process's own session on the mirror
        self.local = {}      # gid -> (graph version scanned, names of checkpoint ops)

    def local_ops(self, gid, graph):
        version, names = self.local.get(gid, (0, frozenset()))
        if version != graph.version:
            names = frozenset(op.name for op in graph.get_operations()
                              if op.type in LOCAL_OPS)
            self.local[gid] = (graph.version, names)
        return names

    def any_local(self):
        return any(self.local_ops(gid, graph) for gid, graph in list(self.sync.graphs.items()))

    def run(self, remote, graph_of, fetches, feed_dict=None, options=None,
            run_metadata=None):
        """`remote(fetches, feed_dict, options, run_metadata)` is the judge's run;
        `graph_of()` the session's graph (the mirror)."""
        def plain():
            return remote(fetches, feed_dict, options, run_metadata)

        if not self.any_local():
            return plain()
        graph = graph_of()
        gid = self.sync.gid_of(graph, make=False) if plain_graph(graph) else None
        if gid is None or not self.local_ops(gid, graph):
            return plain()
        plan = self._plan(graph, fetches, feed_dict)
        if plan is None:
            return plain()
        leaves, elements, fed, needed = plan
        # the inputs of the checkpoint ops that the judge's graph computes
        # (tensors by name: comparing two with == may build an op where eager execution
        # is on)
        local_names = {op.name for op in needed}
        inputs = {}
        for op in needed:
            for tensor in op.inputs:
                if tensor.op.name not in local_names and tensor.name not in fed:
                    inputs.setdefault(tensor.name, tensor)
        values = remote(list(inputs.values()), feed_dict, options, None) if inputs else []
        own_feed = {tensor: value for tensor, value in fed.values()}
        own_feed.update(zip(inputs.values(), values))
        session = self.sessions.get(gid)
        if session is None:
            import tensorflow as tf
            session = self.sessions[gid] = tf.compat.v1.Session(graph=graph)
        outputs = session.run([list(op.outputs) if op.outputs else op for op in needed],
                              feed_dict=own_feed)
        given, stand_in_feed = {}, {}
        for op, value in zip(needed, outputs):
            if not op.outputs:
                stand_in_feed[op.name + ":0"] = False
                continue
            for tensor, tensor_value in zip(op.outputs, value):
                given[tensor.name] = tensor_value
                stand_in_feed[tensor.name] = tensor_value
        # what was asked, by the judge's session, with the checkpoint ops' outputs fed
        rest = [index for index, element in enumerate(elements)
                if element.name not in given and
                not (isinstance(element, _ops().Operation) and element.name in local_names)]
        results = [given.get(element.name) for element in elements]
        if rest:
            feed = dict(feed_dict or {})
            feed.update(stand_in_feed)
            answered = remote([leaves[index] for index in rest], feed, options,
                              run_metadata)
            for index, value in zip(rest, answered):
                results[index] = value
        from tensorflow.python.util import nest
        return nest.pack_sequence_as(fetches, results)

    def _plan(self, graph, fetches, feed_dict):
        """(fetch leaves, their graph elements, {fed tensor's name: (mirror tensor,
        value)}, the checkpoint ops the fetches need, in the graph's order), or None: a run
        for the judge alone (a fetch or feed this reading does not know is the judge's
        session's to refuse)."""
        from tensorflow.python.util import nest
        ops = _ops()
        try:
            leaves = nest.flatten(fetches)
            elements = [graph.as_graph_element(leaf, allow_tensor=True,
                                               allow_operation=True) for leaf in leaves]
            fed = {}
            for key, value in (feed_dict or {}).items():
                if not isinstance(key, (str,) + _graph_tensor_classes(ops)):
                    return None
                tensor = graph.as_graph_element(key, allow_tensor=True,
                                                allow_operation=False)
                fed[tensor.name] = (tensor, value)
        except Exception:
            return None
        seen, found = set(), set()
        stack = [element if isinstance(element, ops.Operation) else element.op
                 for element in elements]
        while stack:
            op = stack.pop()
            if op.name in seen:
                continue
            seen.add(op.name)
            if op.type in LOCAL_OPS:
                found.add(op.name)
            stack.extend(tensor.op for tensor in op.inputs if tensor.name not in fed)
            stack.extend(op.control_inputs)
        if not found:
            return None
        needed = [op for _, op in sorted(_ops_by_id(graph), key=lambda item: item[0])
                  if op.name in found]
        return leaves, elements, fed, needed
