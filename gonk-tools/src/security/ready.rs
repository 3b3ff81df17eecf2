//! [`ReadyWith`]: the allocation-free ready future of the built-in
//! components.

/// A future that is ready at once with `F()`. It is zero-sized when `F`
/// captures nothing, so boxing it (as the component traits do) allocates
/// nothing: the built-in components use it.
pub(crate) struct ReadyWith<F>(pub(crate) F);

impl<T, F: Fn() -> T + Unpin> std::future::Future for ReadyWith<F> {
    type Output = T;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<T> {
        std::task::Poll::Ready((self.0)())
    }
}
