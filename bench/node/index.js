// Bench only: the seeds' stack, Node 20 + ElectroDB, answering the catalog's
// GET /products/{productId} (events/catalog/get-product.json) from the same
// table as the Rust catalog function: one GetItem of PRODUCT#<productId> /
// #METADATA (docs/key-schema.md), the product as JSON, 404 if absent.
// bench/coldstart.py runs it through ./bootstrap, like the Rust binaries.
"use strict";

const { DynamoDBClient } = require("@aws-sdk/client-dynamodb");
const { DynamoDBDocumentClient } = require("@aws-sdk/lib-dynamodb");
const { Entity } = require("electrodb");

// DYNAMODB_ENDPOINT: DynamoDB Local; without it, AWS from the region and the
// default credential chain (the same choice as shared/store/src/client.rs).
const endpoint = process.env.DYNAMODB_ENDPOINT;
const client = DynamoDBDocumentClient.from(new DynamoDBClient(endpoint ? { endpoint } : {}));

// The table's keys as they are, not ElectroDB's defaults: templates with
// casing "none", and items written by the Rust functions (no ElectroDB
// identifiers) read with ignoreOwnership.
const Product = new Entity(
  {
    model: { entity: "Product", version: "1", service: "marketplace" },
    attributes: {
      productId: { type: "string", required: true },
      name: { type: "string", required: true },
      brandId: { type: "string", required: true },
      categoryId: { type: "string", required: true },
      price: { type: "number", required: true },
      stockLevel: { type: "number", required: true },
      description: { type: "string" },
      createdAt: { type: "string", required: true },
      updatedAt: { type: "string", required: true },
    },
    indexes: {
      byId: {
        pk: { field: "pk", composite: ["productId"], template: "PRODUCT#${productId}", casing: "none" },
        sk: { field: "sk", composite: [], template: "#METADATA", casing: "none" },
      },
    },
  },
  { client, table: process.env.TABLE_NAME || "marketplace" },
);

const JSON_HEADERS = { "content-type": "application/json" };

function answer(statusCode, body) {
  return { statusCode, headers: JSON_HEADERS, body: JSON.stringify(body) };
}

exports.handler = async (event) => {
  if (event.routeKey !== "GET /products/{productId}") {
    return answer(404, { error: { code: "not_found", message: "no such route" } });
  }
  const productId = event.pathParameters && event.pathParameters.productId;
  if (typeof productId !== "string" || !/^[0-9A-HJKMNP-TV-Z]{26}$/.test(productId)) {
    return answer(400, { error: { code: "validation", message: "productId: not a ULID" } });
  }
  const { data } = await Product.get({ productId }).go({ ignoreOwnership: true });
  if (!data) {
    return answer(404, { error: { code: "not_found", message: `product \`${productId}\` does not exist` } });
  }
  return answer(200, data);
};
