//! A generated catalog of 1,000 tools: 25 services × 5 kinds of record × 8
//! actions, each with a description and an input schema written from what
//! the record is, and a handler that echoes its name and arguments.

use gonk_tools::prelude::*;

/// `(service, what the service is, [(record, what a record is, a property, its description)])`.
type Service = (
    &'static str,
    &'static str,
    [(&'static str, &'static str, &'static str, &'static str); 5],
);

const SERVICES: [Service; 25] = [
    (
        "billing",
        "the billing system",
        [
            (
                "invoice",
                "bill sent to a customer for payment",
                "currency",
                "ISO 4217 currency code of the amount",
            ),
            (
                "refund",
                "money returned to a customer",
                "reason",
                "why the money goes back",
            ),
            (
                "subscription",
                "recurring paid plan",
                "plan",
                "the plan's price tier",
            ),
            (
                "coupon",
                "discount code",
                "percent_off",
                "discount in percent",
            ),
            (
                "payout",
                "transfer of earnings to a bank account",
                "iban",
                "the receiving bank account number",
            ),
        ],
    ),
    (
        "calendar",
        "shared calendars",
        [
            (
                "event",
                "meeting or appointment at a time",
                "starts_at",
                "start time in RFC 3339",
            ),
            (
                "reminder",
                "alert before something happens",
                "minutes_before",
                "how long before to alert",
            ),
            (
                "room",
                "bookable meeting room",
                "capacity",
                "how many people fit",
            ),
            (
                "availability",
                "free and busy time slot",
                "timezone",
                "IANA time zone name",
            ),
            (
                "invitation",
                "request to attend a meeting",
                "attendee_email",
                "address of the person invited",
            ),
        ],
    ),
    (
        "crm",
        "customer relationship management",
        [
            (
                "lead",
                "prospective customer who showed interest",
                "source",
                "campaign the lead came from",
            ),
            (
                "deal",
                "sales opportunity with an expected value",
                "stage",
                "pipeline stage",
            ),
            (
                "contact",
                "person at a customer company",
                "phone",
                "telephone number",
            ),
            (
                "account",
                "customer company",
                "industry",
                "the company's sector",
            ),
            (
                "note",
                "free-text remark on a customer",
                "body",
                "text of the remark",
            ),
        ],
    ),
    (
        "github",
        "source code hosting",
        [
            (
                "issue",
                "bug report or feature request",
                "labels",
                "labels to tag it with",
            ),
            (
                "pull_request",
                "proposed code change for review",
                "base_branch",
                "branch to merge into",
            ),
            (
                "repository",
                "git project",
                "visibility",
                "public or private",
            ),
            (
                "release",
                "tagged version with notes",
                "tag",
                "git tag name",
            ),
            (
                "workflow_run",
                "continuous integration pipeline run",
                "conclusion",
                "success or failure",
            ),
        ],
    ),
    (
        "slack",
        "team chat",
        [
            (
                "message",
                "chat message posted in a channel",
                "thread_ts",
                "thread to reply in",
            ),
            (
                "channel",
                "chat room for a topic",
                "topic",
                "what the room is about",
            ),
            (
                "user_status",
                "presence and status emoji of a person",
                "emoji",
                "status emoji",
            ),
            (
                "reaction",
                "emoji response to a message",
                "emoji_name",
                "which emoji",
            ),
            (
                "bookmark",
                "saved link pinned in a channel",
                "link",
                "URL to pin",
            ),
        ],
    ),
    (
        "email",
        "electronic mail",
        [
            (
                "draft",
                "unsent email being written",
                "subject",
                "subject line",
            ),
            ("inbox_message", "received email", "sender", "who sent it"),
            ("label", "tag for sorting mail", "color", "label colour"),
            (
                "filter_rule",
                "rule that sorts incoming mail automatically",
                "criteria",
                "what to match",
            ),
            (
                "attachment",
                "file sent along with an email",
                "filename",
                "name of the attached file",
            ),
        ],
    ),
    (
        "storage",
        "file storage buckets",
        [
            (
                "bucket",
                "container of stored objects",
                "region",
                "data centre region",
            ),
            (
                "object",
                "stored file blob",
                "content_type",
                "MIME type of the file",
            ),
            ("folder", "directory grouping files", "path", "folder path"),
            (
                "share_link",
                "public download link to a file",
                "expires_in",
                "how long the link works",
            ),
            (
                "quota",
                "storage space limit",
                "bytes",
                "allowed size in bytes",
            ),
        ],
    ),
    (
        "weather",
        "weather data",
        [
            (
                "forecast",
                "predicted rain, temperature and wind for the coming days",
                "city",
                "city name",
            ),
            (
                "alert",
                "severe storm or heat warning",
                "severity",
                "how dangerous",
            ),
            (
                "station",
                "measuring station",
                "elevation",
                "height above sea level",
            ),
            (
                "observation",
                "measured current temperature and humidity",
                "units",
                "metric or imperial",
            ),
            (
                "air_quality",
                "pollution and pollen index",
                "pollutant",
                "which pollutant",
            ),
        ],
    ),
    (
        "maps",
        "maps and navigation",
        [
            (
                "route",
                "driving or walking directions between two places",
                "travel_mode",
                "car, bike or foot",
            ),
            (
                "place",
                "point of interest such as a restaurant",
                "category",
                "kind of place",
            ),
            (
                "geocode",
                "coordinates for a street address",
                "address",
                "street address",
            ),
            ("traffic", "congestion on roads", "road", "road name"),
            (
                "isochrone",
                "area reachable within a travel time",
                "minutes",
                "travel time budget",
            ),
        ],
    ),
    (
        "hr",
        "human resources",
        [
            (
                "employee",
                "person employed by the company",
                "department",
                "team they belong to",
            ),
            (
                "leave_request",
                "vacation or sick day request",
                "days",
                "number of days off",
            ),
            ("payslip", "monthly salary statement", "month", "pay period"),
            (
                "job_opening",
                "vacancy to hire for",
                "seniority",
                "junior, senior or lead",
            ),
            ("review", "performance appraisal", "rating", "score given"),
        ],
    ),
    (
        "inventory",
        "warehouse stock",
        [
            (
                "product",
                "item for sale with a SKU",
                "sku",
                "stock keeping unit code",
            ),
            (
                "stock_level",
                "quantity on hand in a warehouse",
                "warehouse",
                "which warehouse",
            ),
            (
                "supplier",
                "vendor that delivers goods",
                "lead_time",
                "days to deliver",
            ),
            (
                "purchase_order",
                "order placed with a supplier",
                "quantity",
                "units ordered",
            ),
            (
                "stock_count",
                "physical count of shelves",
                "aisle",
                "aisle counted",
            ),
        ],
    ),
    (
        "shipping",
        "parcel delivery",
        [
            (
                "shipment",
                "parcel on its way to a customer",
                "carrier",
                "delivery company",
            ),
            (
                "label",
                "printable postage label",
                "weight_grams",
                "parcel weight",
            ),
            (
                "tracking",
                "delivery status and location of a parcel",
                "tracking_number",
                "carrier tracking number",
            ),
            (
                "return",
                "parcel sent back by a customer",
                "rma",
                "return authorization number",
            ),
            (
                "pickup",
                "courier collection appointment",
                "window",
                "collection time window",
            ),
        ],
    ),
    (
        "analytics",
        "product analytics",
        [
            ("dashboard", "set of charts", "layout", "grid arrangement"),
            (
                "metric",
                "tracked number such as daily active users",
                "aggregation",
                "sum, average or count",
            ),
            (
                "funnel",
                "conversion steps from visit to purchase",
                "steps",
                "ordered events",
            ),
            (
                "cohort",
                "group of users who signed up together",
                "period",
                "week or month",
            ),
            (
                "segment",
                "filtered audience of users",
                "condition",
                "who belongs",
            ),
        ],
    ),
    (
        "dns",
        "domain name system",
        [
            (
                "zone",
                "domain hosted on the name servers",
                "domain",
                "domain name",
            ),
            (
                "record",
                "A, CNAME or MX entry",
                "ttl",
                "time to live in seconds",
            ),
            (
                "certificate",
                "TLS certificate for HTTPS",
                "common_name",
                "host the certificate is for",
            ),
            (
                "redirect",
                "forwarding of one URL to another",
                "target_url",
                "where to send visitors",
            ),
            (
                "nameserver",
                "authoritative DNS server",
                "hostname",
                "server host name",
            ),
        ],
    ),
    (
        "kubernetes",
        "container orchestration",
        [
            (
                "pod",
                "running container group",
                "namespace",
                "cluster namespace",
            ),
            (
                "deployment",
                "rolling set of replicas",
                "replicas",
                "how many copies",
            ),
            (
                "service",
                "stable network endpoint for pods",
                "port",
                "exposed port",
            ),
            (
                "config_map",
                "configuration values mounted into pods",
                "data",
                "key value pairs",
            ),
            (
                "node",
                "worker machine in the cluster",
                "taint",
                "scheduling restriction",
            ),
        ],
    ),
    (
        "database",
        "relational databases",
        [
            (
                "table",
                "table of rows and columns",
                "schema",
                "database schema name",
            ),
            (
                "backup",
                "snapshot of the data for recovery",
                "retention_days",
                "how long to keep it",
            ),
            ("query", "saved SQL statement", "sql", "the SQL text"),
            (
                "index",
                "index that speeds up lookups on columns",
                "columns",
                "columns covered",
            ),
            (
                "replica",
                "read-only copy of the database",
                "lag",
                "replication delay",
            ),
        ],
    ),
    (
        "payments",
        "card payments",
        [
            (
                "charge",
                "card payment taken from a customer",
                "amount_cents",
                "amount in cents",
            ),
            ("card", "saved credit card", "last4", "last four digits"),
            (
                "dispute",
                "chargeback contested by a cardholder",
                "evidence",
                "documents that prove the sale",
            ),
            (
                "payment_link",
                "hosted checkout page link",
                "price",
                "price to pay",
            ),
            (
                "fraud_score",
                "risk estimate for a payment",
                "threshold",
                "score that blocks",
            ),
        ],
    ),
    (
        "notes",
        "personal notes",
        [
            ("page", "written note page", "title", "page title"),
            ("notebook", "collection of pages", "cover", "cover colour"),
            ("tag", "keyword attached to notes", "name", "tag name"),
            (
                "checklist",
                "to-do list with tick boxes",
                "items",
                "things to do",
            ),
            ("sketch", "hand drawing", "canvas", "drawing size"),
        ],
    ),
    (
        "contacts",
        "address book",
        [
            (
                "person",
                "entry in the address book",
                "nickname",
                "informal name",
            ),
            (
                "group",
                "set of people such as family",
                "members",
                "who is in it",
            ),
            ("birthday", "date someone was born", "date", "day and month"),
            (
                "duplicate",
                "two entries for the same person",
                "confidence",
                "how sure the match is",
            ),
            (
                "vcard",
                "contact card file",
                "version",
                "vCard format version",
            ),
        ],
    ),
    (
        "translation",
        "language translation",
        [
            (
                "text",
                "passage translated into another language",
                "target_language",
                "language to translate into",
            ),
            (
                "glossary",
                "fixed translations of terms",
                "terms",
                "term pairs",
            ),
            (
                "document",
                "whole file translated with its layout",
                "format",
                "docx or pdf",
            ),
            (
                "language",
                "supported language code",
                "script",
                "writing system",
            ),
            (
                "transliteration",
                "text converted between alphabets",
                "from_script",
                "source alphabet",
            ),
        ],
    ),
    (
        "music",
        "music streaming",
        [
            (
                "playlist",
                "ordered list of songs",
                "mood",
                "feeling of the songs",
            ),
            ("track", "single song", "artist", "who performs it"),
            (
                "album",
                "released collection of songs",
                "year",
                "release year",
            ),
            ("lyrics", "words of a song", "line", "line of the song"),
            (
                "radio",
                "endless station seeded by a song",
                "seed",
                "song to start from",
            ),
        ],
    ),
    (
        "travel",
        "trip booking",
        [
            (
                "flight",
                "airline seat between airports",
                "departure_airport",
                "IATA code of the origin airport",
            ),
            (
                "hotel",
                "room booking for nights",
                "check_in",
                "arrival date",
            ),
            (
                "car_rental",
                "hired car for a trip",
                "pickup_location",
                "where to collect the car",
            ),
            ("itinerary", "plan of a whole trip", "days", "trip length"),
            (
                "visa",
                "entry permit for a country",
                "nationality",
                "passport country",
            ),
        ],
    ),
    (
        "recipes",
        "cooking",
        [
            (
                "recipe",
                "dish with ingredients and steps",
                "cuisine",
                "style of cooking",
            ),
            (
                "ingredient",
                "food item used when cooking",
                "allergen",
                "allergy it may trigger",
            ),
            (
                "meal_plan",
                "menu for the week",
                "diet",
                "vegetarian, vegan or any",
            ),
            ("shopping_list", "groceries to buy", "store", "supermarket"),
            (
                "nutrition",
                "calories and macros of food",
                "serving",
                "portion size",
            ),
        ],
    ),
    (
        "fitness",
        "exercise tracking",
        [
            (
                "workout",
                "training session with exercises",
                "intensity",
                "how hard",
            ),
            (
                "run",
                "GPS tracked jog with distance and pace",
                "distance_km",
                "distance in kilometres",
            ),
            ("heart_rate", "pulse measurements", "zone", "training zone"),
            (
                "sleep",
                "night's sleep duration and quality",
                "bedtime",
                "when they went to bed",
            ),
            (
                "goal",
                "target such as steps per day",
                "target",
                "number to reach",
            ),
        ],
    ),
    (
        "support",
        "customer support desk",
        [
            (
                "ticket",
                "customer problem report handled by agents",
                "priority",
                "urgency",
            ),
            ("macro", "canned reply text", "shortcut", "key to insert it"),
            (
                "sla",
                "response time promise",
                "hours",
                "hours to first reply",
            ),
            (
                "satisfaction",
                "customer rating after a conversation",
                "score",
                "rating given",
            ),
            (
                "knowledge_article",
                "help centre article",
                "audience",
                "who it is written for",
            ),
        ],
    ),
];

/// `(action, description template)`: `{record}` is the record's name, `{what}` what it is, `{service}` what the service is.
const ACTIONS: [(&str, &str); 8] = [
    ("create", "Create a new {record} ({what}) in {service}."),
    (
        "list",
        "List every {record} ({what}) in {service}, newest first.",
    ),
    (
        "get",
        "Fetch one {record} ({what}) by its id from {service}.",
    ),
    (
        "update",
        "Change fields of an existing {record} ({what}) in {service}.",
    ),
    (
        "delete",
        "Permanently remove a {record} ({what}) from {service}.",
    ),
    (
        "search",
        "Find each {record} ({what}) in {service} whose text matches a query.",
    ),
    (
        "archive",
        "Archive an old {record} ({what}) in {service} so it stops showing.",
    ),
    (
        "export",
        "Export {record} data ({what}) from {service} as CSV or JSON.",
    ),
];

/// The 1,000 tools, named `<service>.<record>_<action>`, each `read`.
pub fn tools() -> Vec<ToolDefinition> {
    let mut defs = Vec::with_capacity(1000);
    for (service, service_what, records) in SERVICES {
        for (record, what, property, property_description) in records {
            for (action, template) in ACTIONS {
                let name = format!("{service}.{record}_{action}");
                let record_words = record.replace('_', " ");
                let description = template
                    .replace("{what}", what)
                    .replace("{record}", &record_words)
                    .replace("{service}", service_what);
                defs.push(tool(&name, &description, property, property_description));
            }
        }
    }
    defs
}

/// One generated tool: its input is `{id?, <property>?}`; it answers with
/// its own name and the arguments it got.
pub fn tool(
    name: &str,
    description: &str,
    property: &str,
    property_description: &str,
) -> ToolDefinition {
    let reply_name = name.to_owned();
    ToolDefinition::builder(name)
        .description(description)
        .approval(ApprovalTier::Read)
        .input_json_schema(json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The record's id."},
                property: {"type": "string", "description": property_description},
            },
            "additionalProperties": false,
        }))
        .raw_handler(move |input, _ctx| {
            let name = reply_name.clone();
            async move { Ok(ToolOutput::new(json!({"tool": name, "arguments": input}))) }
        })
        .build()
}

/// A registry with the 1,000 tools and the search meta-tools.
pub fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register_all(tools())
        .expect("the generated tools register");
    gonk_tools::search::install(&registry, gonk_tools::search::SearchOptions::default())
        .expect("the search tools register");
    registry
}

/// Runs `name` with `input` and returns its data or error.
pub async fn run(
    registry: &ToolRegistry,
    name: &str,
    input: serde_json::Value,
    ctx: ToolContext,
) -> Result<serde_json::Value, ToolError> {
    collect_tool_outcome(registry.invoke(name, input, ctx), |_| {})
        .await
        .map(|output| output.data)
}

/// The names `tools.search` returns for `query`, best first.
pub async fn search(registry: &ToolRegistry, query: &str, ctx: ToolContext) -> Vec<String> {
    let found = run(registry, "tools.search", json!({"query": query}), ctx)
        .await
        .expect("tools.search answers");
    found["tools"]
        .as_array()
        .expect("a tools array")
        .iter()
        .map(|hit| hit["name"].as_str().expect("a name").to_owned())
        .collect()
}
