//! Ring-buffer sub-buffer pages (`per_cpu/cpuN/trace_pipe_raw`) and the cross-CPU merge.
