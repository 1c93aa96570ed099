"""Autograd across the boundary: the solution differentiates the judge's graph.

A test builds a graph in the judge (`t` requiring grad, `u = net(t)`) and the target
differentiates it (`torch.autograd.grad(u, t, ...)`, `loss.backward()`). The tensors
cross as data, so in the solution process `u` and `t` are unconnected copies. There,
`torch.autograd.grad` and `torch.autograd.backward` (and so `Tensor.backward`) are
wrapped: the part of the computation that is the solution's own is differentiated where
it lives, down to the copies of the judge's graph tensors, and what lies beyond them is
asked of the judge as one operation that names the judge's tensors by their place in the
call (never by anything the solution could forge into another object) and carries the
gradients as data. The judge runs torch's own autograd on its own tensors; results come
back as judge tensors again (so `create_graph` results can be differentiated again, and
a result returned unchanged is the judge's own object with its graph); a `backward`
accumulates into the judge's leaves, where the test reads `.grad`.

Where the solution's own step between the judge's tensors is not linear and the caller
asks for `create_graph`, the derivative of that step would be lost: the run ends with
that reason instead of a wrong value.

A tensor hook the solution registers on its copy of a non-leaf of the judge's graph
(curvlinops' KFAC and Grad-CAM register one on a layer's output from a forward hook) is
registered on the judge's own tensor instead: the judge's backward, where that gradient
exists, calls the solution's hook through its handle while a call of the test's is open,
and takes the gradient it returns. After that call the hook answers for nothing (it is
removed), as a solution's code left in the judge's objects does.

This module knows torch and the two ends' small interfaces (`origins`, `request_index`,
`unchanged_request_tensor`, `ask_autograd`, `limit`, `adopt_grad` of the solution's link;
`serve_autograd` for the judge's), not the wire format.
"""

from __future__ import annotations

import inspect
import threading

OPS = ("grad", "backward")
FLAGS = ("retain_graph", "create_graph")
LIMIT = ("a gradient with create_graph=True through the solution's own non-linear step "
         "on the judge's tensors (autograd across the boundary)")
UNUSED = ("One of the differentiated Tensors appears to not have been used in the graph. "
          "Set allow_unused=True if this is the desired behavior.")

_INSTALLED = {}


class NotAutograd(Exception):
    """An autograd request of the solution that is not data (the judge's verdict:
    tampering)."""


# -- the solution side ----------------------------------------------------------------------


def install(current_link):
    """Wrap torch.autograd.grad and torch.autograd.backward in this (the solution's)
    process; `current_link()` gives the link serving the current call, or None."""
    import torch

    if _INSTALLED:
        return
    real_grad, real_backward = torch.autograd.grad, torch.autograd.backward
    # torch's own functions call the public name again under a TorchFunctionMode
    # (torch.set_default_device's): that call is torch's, never wrapped twice
    inside = threading.local()

    def across(real, serve, wanted):
        """`real` wrapped: served across the boundary by serve(link, real, bound) when
        a call is being served, not already inside one, and wanted(origins)."""
        signature = inspect.signature(real)

        def wrapper(*args, **kwargs):
            link = current_link()
            if link is None or getattr(inside, "on", False) or not wanted(link.origins()):
                return real(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            inside.on = True
            try:
                return serve(link, real, bound)
            finally:
                inside.on = False

        wrapper.__name__, wrapper.__qualname__ = real.__name__, real.__qualname__
        wrapper.__doc__, wrapper.__module__ = real.__doc__, real.__module__
        wrapper.__wrapped__ = real
        return wrapper

    grad = across(real_grad, _grad, bool)
    backward = across(real_backward, _backward,
                      lambda origins: any(kind == "graph" for _, _, kind in origins))
    torch.autograd.grad, torch.autograd.backward = grad, backward
    real_hook = torch.Tensor.register_hook

    def register_hook(self, hook):
        """A hook on a copy of a tensor of the judge's graph is registered on the
        judge's own tensor, where its backward runs (see `ask_hook`)."""
        link = current_link()
        index = None if link is None or getattr(inside, "on", False) else \
            _graph_index(link, self)
        if index is None:
            return real_hook(self, hook)
        return link.ask_hook(index, hook)

    register_hook.__name__ = register_hook.__qualname__ = "register_hook"
    register_hook.__doc__, register_hook.__wrapped__ = real_hook.__doc__, real_hook
    torch.Tensor.register_hook = register_hook
    _INSTALLED.update(grad=real_grad, backward=real_backward, register_hook=real_hook)


def _graph_index(link, tensor):
    """The place in the current call of the copy `tensor` of a non-leaf of the judge's
    graph (a layer's output a forward hook is given), or None."""
    for index, copy, kind in link.origins():
        if copy is tensor and kind == "graph":
            return index
    return None


def _tensors(value):
    """A tensor or a sequence of tensors as a list; None for what is not (GradientEdges,
    a dict of inputs): those stay with torch as they are."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, torch.Tensor) for v in value):
        return list(value)
    return None


def _grads_for(outputs, given):
    import torch

    if given is None:
        return [None] * len(outputs)
    if isinstance(given, torch.Tensor):
        return [given]
    return list(given)


def _find(items, obj):
    for index, item in enumerate(items):
        if item is obj:
            return index
    return None


def _constant(link, value):
    """A gradient the judge may take as a constant: one that needs no derivative, or the
    judge's own tensor, unchanged (it travels as a reference, its graph included)."""
    return value is None or not value.requires_grad or \
        link.unchanged_request_tensor(value) is not None


def lendable(link, value):
    """A gradient the solution may give the judge under create_graph as a leaf of its own:
    one of its own leaves that requires grad (backpack's R_op differentiates
    `grad(out, params, ws, create_graph=True)` with respect to `ws`, zeros it made). The
    judge keeps its copy in the call's request and says where, so a later request names
    it; a derivative with respect to it is the judge's, exact. Any other gradient that
    requires grad would lose its own derivative: the limit."""
    import torch

    base = torch._C.TensorBase
    return value is not None and bool(base.requires_grad.__get__(value)) and \
        bool(base.is_leaf.__get__(value)) and link.unchanged_request_tensor(value) is None


def _grad(link, real_grad, bound):
    args = bound.arguments
    outputs, inputs = _tensors(args["outputs"]), _tensors(args["inputs"])
    if outputs is None or inputs is None or args["is_grads_batched"]:
        return real_grad(*bound.args, **bound.kwargs)
    origins = [(index, t, kind) for index, t, kind in link.origins() if t.requires_grad]
    graph = [t for _, t, kind in origins if kind == "graph"]
    judged = [t for _, t, _ in origins]   # every copy of a judge tensor in a graph
    create_graph = bool(args["create_graph"])
    retain_graph = create_graph if args["retain_graph"] is None else bool(args["retain_graph"])
    allow_unused = bool(args["allow_unused"]) or bool(args["materialize_grads"])
    grad_outputs = _grads_for(outputs, args["grad_outputs"])
    if not graph or len(grad_outputs) != len(outputs) or \
            not all(t.requires_grad for t in outputs + inputs):
        return real_grad(*bound.args, **bound.kwargs)   # torch's own answer (or error)
    # the solution's own part, down to the copies of the judge's graph tensors
    targets = list(graph)
    for tensor in inputs:
        if _find(targets, tensor) is None:
            targets.append(tensor)
    local = real_grad(outputs, targets, grad_outputs, retain_graph=retain_graph,
                      create_graph=create_graph, allow_unused=True)
    reached = [(t, v) for t, v in zip(graph, local) if v is not None]
    # the inputs that are the judge's tensors in its graph (a copy the solution made
    # require grad itself is its own)
    judge_inputs = [t for t in inputs if _find(judged, t) is not None]
    own = [local[_find(targets, t)] for t in inputs]
    if not reached or not judge_inputs or (
            len(judge_inputs) == 1 and all(t is judge_inputs[0] for t, _ in reached)):
        # nothing of the judge's graph lies between (or only the one input itself):
        # the solution's own autograd has the whole answer
        return _finish(own, inputs, allow_unused, args["materialize_grads"])
    if create_graph and not all(_constant(link, v) or lendable(link, v) for _, v in reached):
        link.limit(LIMIT)
    across = link.ask_autograd(
        "grad", [link.request_index(t) for t, _ in reached], [v for _, v in reached],
        [link.request_index(t) for t in judge_inputs],
        {"retain_graph": retain_graph, "create_graph": create_graph})
    results = []
    for tensor, mine in zip(inputs, own):
        at = _find(judge_inputs, tensor)
        if at is None:
            results.append(mine)
            continue
        theirs = across[at]
        if _find(graph, tensor) is not None or mine is None:
            results.append(theirs)   # its own part travelled with the request
        elif theirs is None:
            results.append(mine)
        else:
            results.append(mine + theirs)
    return _finish(results, inputs, allow_unused, args["materialize_grads"])


def _finish(results, inputs, allow_unused, materialize):
    import torch

    out = []
    for value, tensor in zip(results, inputs):
        if value is None:
            if materialize:
                value = torch.zeros_like(tensor)
            elif not allow_unused:
                raise RuntimeError(UNUSED)
        out.append(value)
    return tuple(out)


def _backward(link, real_backward, bound):
    args = bound.arguments
    tensors = _tensors(args["tensors"])
    inputs = None if args["inputs"] is None else _tensors(args["inputs"])
    if tensors is None or (args["inputs"] is not None and inputs is None) or \
            args["grad_variables"] is not None:
        return real_backward(*bound.args, **bound.kwargs)
    origins = [(index, t, kind) for index, t, kind in link.origins() if t.requires_grad and
               (inputs is None or kind == "graph" or _find(inputs, t) is not None)]
    copies = [t for _, t, _ in origins]
    create_graph = bool(args["create_graph"])
    retain_graph = create_graph if args["retain_graph"] is None else bool(args["retain_graph"])
    saved = [t.grad for t in copies]
    for tensor in copies:
        tensor.grad = None
    try:
        local_inputs = None
        if inputs is not None:
            local_inputs = inputs + [t for t in copies if _find(inputs, t) is None]
        real_backward(tensors, args["grad_tensors"], retain_graph, create_graph,
                      inputs=local_inputs)
        deltas = [t.grad for t in copies]
    finally:
        for tensor, grad in zip(copies, saved):
            tensor.grad = grad
    reached = [(index, v) for (index, _, _), v in zip(origins, deltas) if v is not None]
    if not any(kind == "graph" and v is not None
               for (_, _, kind), v in zip(origins, deltas)):
        for tensor, before, delta in zip(copies, saved, deltas):   # as backward would have
            if delta is not None:
                tensor.grad = delta if before is None else before + delta
        return None
    if create_graph and not all(_constant(link, v) for _, v in reached):
        link.limit(LIMIT)
    judge_inputs = None
    if inputs is not None:
        judge_inputs = [link.request_index(t) for t in inputs
                        if link.request_index(t) is not None]
        if not judge_inputs:
            return None
    grads = link.ask_autograd(
        "backward", [index for index, _ in reached], [v for _, v in reached], judge_inputs,
        {"retain_graph": retain_graph, "create_graph": create_graph})
    for index, grad in grads:
        link.adopt_grad(index, grad)
    return None


# -- the judge side -------------------------------------------------------------------------


def serve_autograd(request, op, outputs, grads, inputs, flags):
    """Run torch's autograd on the judge's own tensors of the current call (`request`),
    named by place, with data gradients. Raises NotAutograd for a request that is not
    data; torch's own errors propagate (they are the solution's to see)."""
    import torch

    if op not in OPS:
        raise NotAutograd("an unknown autograd operation")
    if not isinstance(flags, dict) or set(flags) != set(FLAGS) or \
            not all(type(flags[f]) is bool for f in FLAGS):
        raise NotAutograd("autograd flags that are not data")
    outs = _named(request, outputs)
    ins = None if op == "backward" and inputs is None else _named(request, inputs)
    if not isinstance(grads, list) or len(grads) != len(outs) or not all(
            g is None or isinstance(g, torch.Tensor) for g in grads):
        raise NotAutograd("gradients that are not tensors")
    if op == "grad":
        return list(torch.autograd.grad(outs, ins, grads, allow_unused=True, **flags))
    torch.autograd.backward(outs, grads, inputs=ins, **flags)
    # the judge's leaves the solution has copies of: their .grad as it is now
    return [(index, tensor.grad) for index, tensor in enumerate(request)
            if isinstance(tensor, torch.Tensor) and tensor.requires_grad and
            (tensor.is_leaf or (ins is not None and _find(ins, tensor) is not None))]


def _named(request, indices):
    import torch

    if not isinstance(indices, list) or not indices or not all(
            type(i) is int and 0 <= i < len(request) and
            isinstance(request[i], torch.Tensor) for i in indices):
        raise NotAutograd("a reference to a tensor the judge never sent")
    return [request[i] for i in indices]

