"""The browsable API documents, /docs (Swagger UI) and /redoc, working offline.

FastAPI's own pages load their scripts and styles from a CDN, so on a machine
without internet they are blank. Here the assets come from an installed package
(fastapi-offline ships Swagger UI's and ReDoc's builds) and are served under
/docs/assets; nothing on either page is fetched from anywhere but this server.
"""

from __future__ import annotations

from importlib.resources import files

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_PATH = "/docs/assets"
ASSETS = files("fastapi_offline") / "static"
SWAGGER_PARAMETERS = {
    "validatorUrl": None,  # Swagger UI would otherwise send the document to an outside validator.
    "persistAuthorization": True,
    "displayRequestDuration": True,
}


def add_docs(app: FastAPI) -> None:
    app.mount(ASSETS_PATH, StaticFiles(directory=str(ASSETS)), name="docs-assets")
    app.add_api_route("/docs", swagger_ui, methods=["GET"], include_in_schema=False)
    app.add_api_route("/redoc", redoc, methods=["GET"], include_in_schema=False)


# Functions of the module, not closures over the app: FastAPI keeps every endpoint it
# has looked at in caches of its own (up to 4,096), and a closure kept there would keep
# its app alive, with its store, after the app is gone (a tenant reopened, a test done).


async def swagger_ui(request: Request) -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url="/openapi.json",
        title=f"{request.app.title} - Swagger UI",
        swagger_js_url=f"{ASSETS_PATH}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSETS_PATH}/swagger-ui.css",
        swagger_favicon_url=f"{ASSETS_PATH}/favicon.png",
        swagger_ui_parameters=SWAGGER_PARAMETERS,
    )


async def redoc(request: Request) -> HTMLResponse:
    return get_redoc_html(
        openapi_url="/openapi.json",
        title=f"{request.app.title} - ReDoc",
        redoc_js_url=f"{ASSETS_PATH}/redoc.standalone.js",
        redoc_favicon_url=f"{ASSETS_PATH}/favicon.png",
        with_google_fonts=False,
    )
