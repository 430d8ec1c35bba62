// Rebuild when `cargo kernelfoundry tune` adds or changes entries under kernelfoundry/.
fn main() {
    kf_build::track_cache();
}
