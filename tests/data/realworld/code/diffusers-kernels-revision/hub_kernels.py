# A fixture written for fa-lint's tests: which Hub kernel loads is a variable, looked up with a
# revision from a table of the module.
from kernels import get_kernel

_REVISIONS = {
    "kernels-community/flash-attn3": "some-branch",
    "kernels-community/sage_attention": None,
}


def load(kernel_id):
    if kernel_id not in _REVISIONS:
        raise NotImplementedError(kernel_id)
    return get_kernel(kernel_id, revision=_REVISIONS.get(kernel_id))
