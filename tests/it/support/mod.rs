//! What the tests share: how a test skips (`skips`) and when live (`live`) and VM (`vm`)
//! tests can run, the fixture trees (`fixtures`), recording with trace-cmd
//! (`tracecmd`), the live perf tests' checks (`perf`) and counting what trace.dat files hold (`dat`), pins of files our writer
//! made that trace-cmd read (`pins`), and the kernel-text oracle of fixture trees
//! (`event_oracle`), small synthesized trace.dat files (`synth`), and fixture-tree copies with
//! foreign instances and host files (`tree`).

pub mod dat;
pub mod event_oracle;
pub mod fixtures;
pub mod live;
pub mod perf;
pub mod pins;
pub mod skips;
pub mod synth;
pub mod tracecmd;
pub mod tree;
pub mod vm;
