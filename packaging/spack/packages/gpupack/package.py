# Spack recipe for gpupack (a repository of its own: spack repo add packaging/spack).
# Reviewed against Spack's packaging guide (MakefilePackage, variants, dependency types);
# not run here: Spack itself cannot be fetched on the machine this was written on.

from spack.package import *


class Gpupack(MakefilePackage):
    """Packs many small jobs onto NVIDIA GPUs the way GNU parallel runs commands,
    sharing each GPU through MPS; manages MPS daemons, MIG geometry and the
    time-slice policy, and measures what each way of sharing gains.

    NVML and libcuda are loaded with dlopen at run time: building needs no CUDA.
    """

    homepage = "https://github.com/gpupack/gpupack"
    git = "https://github.com/gpupack/gpupack.git"

    maintainers("gpupack")

    # The tree names no license yet: say it here when it does (license("...")).

    version("main", branch="main")

    variant(
        "slurm",
        default=False,
        description="Build gpupack_spank.so, the Slurm plugin (against this Slurm's major release)",
    )

    depends_on("c", type="build")
    depends_on("gmake", type="build")
    # spank.h only: the plugin is loaded by slurmd, srun, sbatch; it must match their major
    depends_on("slurm", when="+slurm")

    conflicts("platform=darwin", msg="gpupack runs on Linux (/proc, NVML, MPS)")

    def _make_args(self):
        args = [
            f"PREFIX={self.prefix}",
            # no CUDA toolkit: gpupack-work (the CUDA workloads of the GPU tests) stays out
            "NVCC=",
            "V=1",
        ]
        if self.spec.satisfies("+slurm"):
            args.append(f"SPANK_H={self.spec['slurm'].prefix.include.slurm}/spank.h")
        else:
            args.append("SPANK_H=")
        return args

    @property
    def build_targets(self):
        return ["all"] + self._make_args()

    @property
    def install_targets(self):
        return ["install"] + self._make_args()

    def setup_run_environment(self, env):
        # the simulated machines (--sim NAME) are found beside the binary; nothing to set
        pass

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def check_install(self):
        gpupack = Executable(self.prefix.bin.gpupack)
        gpupack("--version")
        # a simulated MPS farm through the installed stand-in: no GPU needed
        gpupack("--sim", "h100-80gb", "run", "--share", "mps", "true", ":::", "1", "2")
