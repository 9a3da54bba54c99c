//! perf_event_open sampling on the same event model (the only module with `unsafe`).
