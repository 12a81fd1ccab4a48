import nox

FA = "2.4.2"
GPU = ["flash-attn>=2.6", "torch"]


@nox.session(python=["3.11"])
def tests(session):
    session.install("-r", "requirements.txt")
    session.install(f"flash-attn=={FA}", "--no-build-isolation")
    session.install(*GPU)
    session.run("python", "-m", "pip", "install", "flash_attn==2.3.6")
    session.install(FLASH_ATTN_SPEC)
    session.run("pytest")


@nox.session(name="gpu-tests")
def gpu(s):
    s.run_install("uv", "pip", "install", "flash-attn>=" + "2.0")
    s.conda_install("flash-attn=2.7.4", channel="conda-forge")
