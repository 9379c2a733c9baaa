//! Failed workloads: from the real agent to an alert, and on the server's pages and answers.

mod end_to_end;
mod pages;
