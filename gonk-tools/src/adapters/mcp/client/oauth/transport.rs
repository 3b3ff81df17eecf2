//! The HTTP client under an OAuth connection: every request rmcp's
//! streamable-HTTP transport sends carries the session's token, and a
//! `401` or `403 insufficient_scope` is answered here (refresh, authorize,
//! step up) and the request sent again, so rmcp only ever sees the final
//! answer.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use super::scopes::Attempts;
use super::session::OAuthSession;

/// `inner` with the session's tokens; the `Authorization` rmcp would send
/// (an API key) is replaced by the token.
#[derive(Clone)]
pub(crate) struct OAuthHttp<C> {
    inner: C,
    session: Arc<OAuthSession>,
}

impl<C> OAuthHttp<C> {
    pub(crate) fn new(inner: C, session: Arc<OAuthSession>) -> Self {
        OAuthHttp { inner, session }
    }
}

impl<C: StreamableHttpClient + Sync> OAuthHttp<C> {
    /// Runs `call` with the current token, and again after each renewal
    /// the server's refusal calls for.
    async fn authorized<T, F, Fut>(&self, call: F) -> Result<T, StreamableHttpError<C::Error>>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<C::Error>>>,
    {
        let mut token = self.session.token().await?;
        let mut attempts = Attempts::new(self.session.max_step_ups());
        loop {
            let refused = match call(token.clone()).await {
                Err(refused) => refused,
                answered => return answered,
            };
            let renewed = match &refused {
                StreamableHttpError::AuthRequired(challenge) => {
                    self.session
                        .on_unauthorized(
                            token.as_deref(),
                            &challenge.www_authenticate_header,
                            &mut attempts,
                        )
                        .await?
                }
                StreamableHttpError::InsufficientScope(challenge) => {
                    self.session
                        .on_forbidden(
                            token.as_deref(),
                            &challenge.www_authenticate_header,
                            &mut attempts,
                        )
                        .await?
                }
                _ => None,
            };
            match renewed {
                Some(fresh) => token = Some(fresh),
                None => return Err(refused),
            }
        }
    }
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for OAuthHttp<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.authorized(|token| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.authorized(|token| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.authorized(|token| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.authorized(|token| {
            self.inner.delete_session(
                uri.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.authorized(|token| {
            self.inner.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.authorized(|token| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}
