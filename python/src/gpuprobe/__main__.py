"""python -m gpuprobe: the lesson's PyTorch check, line for line,

    print(f"CUDA available: {torch.cuda.is_available()}")
    print(f"CUDA version: {torch.version.cuda}")
    if torch.cuda.is_available():
        print(f"GPU: {torch.cuda.get_device_name(0)}")
        print(f"Memory: {torch.cuda.get_device_properties(0).total_memory / 1e9:.1f} GB")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(f"Using: {device}")

with one more line when CUDA is not usable, saying why:

    Reason: <cause> (<detail>)

"CUDA version" is that of the CUDA runtime library actually loaded (None
when none could be); "Using" is the device gpuprobe.select() chooses (the
GPU with the most free memory, else the CPU; GPUPROBE_DEVICE overrides).
No CUDA context is created. Exit status 0 whatever the answer; 1 when the
library cannot be used or the selection fails (the reason on stderr).
"""

import sys
from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args:
        out = sys.stdout if args[0] in ("-h", "--help") else sys.stderr
        print("usage: python -m gpuprobe\n\nIs CUDA usable, which version, which GPU, "
              "and which device to use (the lesson's torch.cuda check).", file=out)
        return 0 if out is sys.stdout else 2

    import gpuprobe

    try:
        with gpuprobe.Context() as ctx:
            status = ctx.cuda_status()
            print("CUDA available: %s" % status.available)
            print("CUDA version: %s" % status.runtime_version)
            if status.available:
                gpu = ctx.device(1)  # cuda:0 (device 0 is the CPU)
                print("GPU: %s" % gpu.name)
                print("Memory: %.1f GB" % (gpu.total_memory / 1e9))
            else:
                print("Reason: %s (%s)" % (status.reason, status.detail))
            print("Using: %s" % ctx.select().torch_device)
    except gpuprobe.Error as exc:
        sys.stdout.flush()
        print("gpuprobe: %s" % exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
