//! Placement set-up for tests: providers, inventories and allocations made as an admin.

use super::*;

impl RealCloud {
    /// Creates resource provider `name` and reads it back by name; its uuid.
    pub async fn create_provider(&self, name: &str) -> Uuid {
        or_panic(
            self.try_create_provider(name)
                .await
                .with_context(|| format!("create provider {name}")),
        )
    }

    async fn try_create_provider(&self, name: &str) -> anyhow::Result<Uuid> {
        self.placement_call(
            Method::POST,
            "/resource_providers",
            Some(json!({"name": name})),
        )
        .await?
        .require("create", &[201])?;
        let token = self.helper_token().await?;
        let found = self
            .send(
                self.placement_request(Method::GET, "/resource_providers", &token)
                    .query(&[("name", name)]),
            )
            .await?
            .require("read back", &[200])?;
        let uuid = found.body["resource_providers"][0]["uuid"]
            .as_str()
            .with_context(|| format!("not found after creation: {}", found.body))?;
        uuid.parse().with_context(|| format!("not a uuid: {uuid}"))
    }

    /// Replaces `provider`'s inventory with `(resource class, total)`s (defaults for the
    /// rest), at its current generation; retried if the generation moves meanwhile.
    pub async fn set_inventory(&self, provider: Uuid, inventory: &[(&str, u64)]) {
        or_panic(
            self.try_set_inventory(provider, inventory)
                .await
                .with_context(|| format!("set inventory of provider {provider}")),
        )
    }

    async fn try_set_inventory(
        &self,
        provider: Uuid,
        inventory: &[(&str, u64)],
    ) -> anyhow::Result<()> {
        let inventories: serde_json::Map<String, Value> = inventory
            .iter()
            .map(|&(class, total)| (class.to_owned(), json!({"total": total})))
            .collect();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let current = self
                .placement_call(
                    Method::GET,
                    &format!("/resource_providers/{provider}"),
                    None,
                )
                .await?
                .require("read provider", &[200])?;
            let generation = current.body["generation"]
                .as_u64()
                .with_context(|| format!("provider without a generation: {}", current.body))?;
            let body = json!({"resource_provider_generation": generation,
                "inventories": inventories});
            let answer = self
                .placement_call(
                    Method::PUT,
                    &format!("/resource_providers/{provider}/inventories"),
                    Some(body),
                )
                .await?;
            if answer.status == StatusCode::CONFLICT && attempt < 3 {
                continue;
            }
            answer.require("put inventories", &[200])?;
            return Ok(());
        }
    }

    /// Allocates `(resource class, amount)`s of `provider` to `consumer`, for `project_id` and
    /// `user_id` (the 1.17 body, as `keystone-auth/31-put-allocation-consumer1.json`); replaces
    /// what `consumer` had.
    pub async fn put_allocation(
        &self,
        consumer: Uuid,
        provider: Uuid,
        resources: &[(&str, u64)],
        project_id: &str,
        user_id: &str,
    ) {
        let body = json!({"allocations": allocations(provider, resources),
            "project_id": project_id, "user_id": user_id});
        let put = self
            .placement_call(Method::PUT, &format!("/allocations/{consumer}"), Some(body))
            .await
            .and_then(|answer| answer.require("put", &[204]));
        or_panic(put.with_context(|| format!("allocation of {consumer} on {provider}")));
    }

    /// [`Self::put_allocation`] at microversion 1.38, where a consumer has a type (as a Nova
    /// that types its consumers writes `MIGRATION` for a migration's); a new consumer.
    pub async fn put_typed_allocation(
        &self,
        consumer: Uuid,
        provider: Uuid,
        resources: &[(&str, u64)],
        consumer_type: &str,
    ) {
        let body = json!({"allocations": allocations(provider, resources),
            "project_id": "p-test", "user_id": "u-test", "consumer_generation": null,
            "consumer_type": consumer_type});
        let path = format!("/allocations/{consumer}");
        let put = self
            .placement_call_at(Method::PUT, &path, Some(body), "placement 1.38")
            .await
            .and_then(|answer| answer.require("put at 1.38", &[204]));
        or_panic(put.with_context(|| format!("{consumer_type} allocation of {consumer}")));
    }

    /// `provider`'s allocations: consumer → resource class → amount.
    pub async fn provider_allocations(
        &self,
        provider: Uuid,
    ) -> BTreeMap<Uuid, BTreeMap<String, u64>> {
        or_panic(
            self.try_provider_allocations(provider)
                .await
                .with_context(|| format!("allocations of provider {provider}")),
        )
    }

    async fn try_provider_allocations(
        &self,
        provider: Uuid,
    ) -> anyhow::Result<BTreeMap<Uuid, BTreeMap<String, u64>>> {
        #[derive(Deserialize)]
        struct Allocations {
            allocations: BTreeMap<Uuid, Allocation>,
        }
        #[derive(Deserialize)]
        struct Allocation {
            resources: BTreeMap<String, u64>,
        }
        let answer = self
            .placement_call(
                Method::GET,
                &format!("/resource_providers/{provider}/allocations"),
                None,
            )
            .await?
            .require("get", &[200])?;
        let allocations = Allocations::deserialize(&answer.body)
            .with_context(|| format!("unexpected body {}", answer.body))?;
        Ok(allocations
            .allocations
            .into_iter()
            .map(|(consumer, a)| (consumer, a.resources))
            .collect())
    }

    /// A request to Placement at `path` with `token` and [`PLACEMENT_MICROVERSION`], for tests
    /// that want to see answers themselves (e.g. a 401 for a revoked token).
    pub fn placement_request(
        &self,
        method: Method,
        path: &str,
        token: &str,
    ) -> reqwest::RequestBuilder {
        self.placement_request_at(method, path, token, PLACEMENT_MICROVERSION)
    }

    /// [`Self::placement_request`] at another microversion, e.g. `placement 1.38`.
    pub fn placement_request_at(
        &self,
        method: Method,
        path: &str,
        token: &str,
        microversion: &str,
    ) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.placement))
            .header("accept", "application/json")
            .header("openstack-api-version", microversion)
            .header("x-auth-token", token)
    }

    /// Sends `request`; any answer is an `Ok`, only a failure to get one is an error.
    pub async fn send(&self, request: reqwest::RequestBuilder) -> anyhow::Result<Answer> {
        let response = request.send().await.context("no answer")?;
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.context("answer body")?;
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        Ok(Answer {
            status,
            headers,
            body,
        })
    }

    async fn placement_call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<Answer> {
        self.placement_call_at(method, path, body, PLACEMENT_MICROVERSION)
            .await
    }

    /// [`Self::placement_call`] at another microversion.
    async fn placement_call_at(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        microversion: &str,
    ) -> anyhow::Result<Answer> {
        let token = self.helper_token().await?;
        let what = format!("{method} {path}");
        let mut request = self.placement_request_at(method, path, &token, microversion);
        if let Some(body) = body {
            request = request.json(&body);
        }
        self.send(request).await.context(what)
    }
}

/// An allocation request's `allocations`: `(resource class, amount)`s of one provider.
fn allocations(provider: Uuid, resources: &[(&str, u64)]) -> Value {
    let resources: serde_json::Map<String, Value> = resources
        .iter()
        .map(|&(class, amount)| (class.to_owned(), json!(amount)))
        .collect();
    json!({provider.to_string(): {"resources": resources}})
}
