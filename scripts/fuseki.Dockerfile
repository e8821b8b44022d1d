# fuseki.Dockerfile: Apache Jena Fuseki for compose.yaml, built from the
# jena-fuseki-server jar on Maven Central, the one scripts/fuseki.sh runs in
# the tests: compose.yaml passes FUSEKI_VERSION from scripts/versions.env
# (TestServiceVersions checks that it does). The download is checked
# against the .sha1 published next to it, as scripts/fuseki.sh checks it.
FROM eclipse-temurin:21-jre
ARG FUSEKI_VERSION
ARG REPO=https://repo1.maven.org/maven2/org/apache/jena/jena-fuseki-server
RUN set -eux; \
	test -n "$FUSEKI_VERSION"; \
	apt-get update; \
	apt-get install -y --no-install-recommends ca-certificates curl; \
	rm -rf /var/lib/apt/lists/*; \
	url="$REPO/$FUSEKI_VERSION/jena-fuseki-server-$FUSEKI_VERSION.jar"; \
	curl -fsSL --retry 3 -o /opt/fuseki-server.jar "$url"; \
	echo "$(curl -fsSL --retry 3 "$url.sha1" | cut -c1-40)  /opt/fuseki-server.jar" | sha1sum -c -
WORKDIR /fuseki
EXPOSE 3030
ENV JVM_ARGS=-Xmx2g
# Dataset /ds in TDB2 under /fuseki/databases, updates on, /$/ping for the
# health check: the options scripts/fuseki.sh starts the server with.
ENTRYPOINT ["sh", "-c", "exec java $JVM_ARGS -jar /opt/fuseki-server.jar \"$@\"", "fuseki-server"]
CMD ["--port", "3030", "--loc", "/fuseki/databases/ds", "--update", "--ping", "/ds"]
