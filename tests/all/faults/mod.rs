//! Faults under the real server binary: processes killed and Postgres stopped under load, a
//! hanging webhook receiver, and storage that fills or locks.

mod storage;
mod under_load;
