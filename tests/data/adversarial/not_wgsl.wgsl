// cheat: not WGSL at all (an LLM answer with prose around the code)
// kernel: ELEMWISE
// expect: level=0 reason=parse
Here is the optimized kernel:
fn main() { y[i] = x[i] }
