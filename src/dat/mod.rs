//! trace.dat v6/v7 files: reader and writer compatible with trace-cmd.
