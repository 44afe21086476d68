package openstackstub

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"
)

type router func(pattern string, write bool, h handler)

func (c *Cloud) identityRoutes(route router) {
	// Projects and users share their shape: an ID, a name in a domain.
	objects := func(plural, singular string, store func() map[string]map[string]any, created func(id string, body map[string]any)) {
		route("GET /v3/"+plural+"/{id}", false, func(r *http.Request, _ map[string]any) (int, any) {
			o, ok := store()[r.PathValue("id")]
			if !ok {
				return notFound(singular)
			}
			c.saw(singular + "/" + o["id"].(string))
			return http.StatusOK, map[string]any{singular: o}
		})
		route("GET /v3/"+plural, false, func(r *http.Request, _ map[string]any) (int, any) {
			return http.StatusOK, map[string]any{plural: list(r, store()), "links": links()}
		})
		route("POST /v3/"+plural, true, func(_ *http.Request, body map[string]any) (int, any) {
			id := newID()
			o := map[string]any{"id": id, "domain_id": "default", "enabled": true, "description": ""}
			merge(o, body[singular])
			if created != nil {
				created(id, o)
			}
			store()[id] = o
			c.saw(singular + "/" + id)
			return http.StatusCreated, map[string]any{singular: o}
		})
		route("PATCH /v3/"+plural+"/{id}", true, func(r *http.Request, body map[string]any) (int, any) {
			o, ok := store()[r.PathValue("id")]
			if !ok {
				return notFound(singular)
			}
			merge(o, body[singular])
			if created != nil {
				created(r.PathValue("id"), o)
			}
			return http.StatusOK, map[string]any{singular: o}
		})
		route("DELETE /v3/"+plural+"/{id}", true, func(r *http.Request, _ map[string]any) (int, any) {
			if _, ok := store()[r.PathValue("id")]; !ok {
				return notFound(singular)
			}
			delete(store(), r.PathValue("id"))
			delete(c.seen, singular+"/"+r.PathValue("id"))
			return http.StatusNoContent, nil
		})
	}
	objects("projects", "project", func() map[string]map[string]any { return c.projects }, func(_ string, o map[string]any) {
		o["is_domain"], o["parent_id"] = false, "default"
		if o["tags"] == nil {
			o["tags"] = []string{}
		}
	})
	objects("users", "user", func() map[string]map[string]any { return c.users }, func(id string, o map[string]any) {
		// The password is kept apart, and never answered.
		if pw, ok := o["password"].(string); ok {
			c.passwords[id] = pw
			delete(o, "password")
		}
		o["password_expires_at"] = nil
	})
	route("GET /v3/roles", false, func(r *http.Request, _ map[string]any) (int, any) {
		out := []map[string]any{}
		for _, role := range []string{"admin", "member", "reader"} {
			if n := r.URL.Query().Get("name"); n == "" || n == role {
				out = append(out, map[string]any{"id": role, "name": role, "domain_id": nil})
			}
		}
		return http.StatusOK, map[string]any{"roles": out, "links": links()}
	})
	grant := func(r *http.Request) string {
		return r.PathValue("project") + "/" + r.PathValue("user") + "/" + r.PathValue("role")
	}
	route("HEAD /v3/projects/{project}/users/{user}/roles/{role}", false, func(r *http.Request, _ map[string]any) (int, any) {
		if !c.grants[grant(r)] {
			return http.StatusNotFound, nil
		}
		c.saw("grant/" + grant(r))
		return http.StatusNoContent, nil
	})
	route("PUT /v3/projects/{project}/users/{user}/roles/{role}", true, func(r *http.Request, _ map[string]any) (int, any) {
		if c.projects[r.PathValue("project")] == nil || c.users[r.PathValue("user")] == nil {
			return notFound("project or user")
		}
		c.grants[grant(r)] = true
		c.saw("grant/" + grant(r))
		return http.StatusNoContent, nil
	})
	route("DELETE /v3/projects/{project}/users/{user}/roles/{role}", true, func(r *http.Request, _ map[string]any) (int, any) {
		delete(c.grants, grant(r))
		delete(c.seen, "grant/"+grant(r))
		return http.StatusNoContent, nil
	})
	appcreds := func(r *http.Request) []map[string]any {
		name := r.URL.Query().Get("name")
		return slices.DeleteFunc(byID(c.appcreds), func(a map[string]any) bool {
			return a["user_id"] != r.PathValue("user") || (name != "" && a["name"] != name)
		})
	}
	route("GET /v3/users/{user}/application_credentials", false, func(r *http.Request, _ map[string]any) (int, any) {
		return http.StatusOK, map[string]any{"application_credentials": appcreds(r), "links": links()}
	})
	route("GET /v3/users/{user}/application_credentials/{id}", false, func(r *http.Request, _ map[string]any) (int, any) {
		a, ok := c.appcreds[r.PathValue("id")]
		if !ok || a["user_id"] != r.PathValue("user") {
			return notFound("application credential")
		}
		c.saw("application_credential/" + r.PathValue("id"))
		return http.StatusOK, map[string]any{"application_credential": a}
	})
	route("POST /v3/users/{user}/application_credentials", true, func(r *http.Request, body map[string]any) (int, any) {
		id := newID()
		a := map[string]any{"id": id, "user_id": r.PathValue("user"), "project_id": c.tokens[r.Header.Get("X-Auth-Token")].project,
			"unrestricted": false, "expires_at": nil, "description": ""}
		merge(a, body["application_credential"])
		if roles, ok := a["roles"].([]any); ok {
			for _, role := range roles {
				if m, ok := role.(map[string]any); ok && m["id"] == nil {
					m["id"] = m["name"]
				}
			}
		}
		secret := newID()
		c.appcreds[id] = a
		c.saw("application_credential/" + id)
		out := maps.Clone(a)
		out["secret"] = secret
		return http.StatusCreated, map[string]any{"application_credential": out}
	})
	route("DELETE /v3/users/{user}/application_credentials/{id}", true, func(r *http.Request, _ map[string]any) (int, any) {
		if _, ok := c.appcreds[r.PathValue("id")]; !ok {
			return notFound("application credential")
		}
		delete(c.appcreds, r.PathValue("id"))
		delete(c.seen, "application_credential/"+r.PathValue("id"))
		return http.StatusNoContent, nil
	})
}

func (c *Cloud) computeRoutes(route router) {
	const p = "/compute/v2.1"
	aggregate := func(r *http.Request) (map[string]any, int) {
		id := atoi(r.PathValue("id"))
		return c.aggregates[id], id
	}
	route("GET "+p+"/os-aggregates", false, func(_ *http.Request, _ map[string]any) (int, any) {
		return http.StatusOK, map[string]any{"aggregates": byID(c.aggregates)}
	})
	route("GET "+p+"/os-aggregates/{id}", false, func(r *http.Request, _ map[string]any) (int, any) {
		a, id := aggregate(r)
		if a == nil {
			return notFound("aggregate")
		}
		c.saw("aggregate/" + strconv.Itoa(id))
		return http.StatusOK, map[string]any{"aggregate": a}
	})
	route("POST "+p+"/os-aggregates", true, func(_ *http.Request, body map[string]any) (int, any) {
		id := c.nextAgg
		c.nextAgg++
		now := time.Now().UTC().Format(timeFormat)
		a := map[string]any{"id": id, "uuid": newID(), "hosts": []string{}, "metadata": map[string]any{},
			"created_at": now, "updated_at": "", "deleted_at": "", "deleted": false, "availability_zone": nil}
		merge(a, body["aggregate"])
		if az, ok := a["availability_zone"].(string); ok && az != "" {
			a["metadata"].(map[string]any)["availability_zone"] = az
		}
		c.aggregates[id] = a
		c.saw("aggregate/" + strconv.Itoa(id))
		return http.StatusOK, map[string]any{"aggregate": a}
	})
	route("PUT "+p+"/os-aggregates/{id}", true, func(r *http.Request, body map[string]any) (int, any) {
		a, _ := aggregate(r)
		if a == nil {
			return notFound("aggregate")
		}
		merge(a, body["aggregate"])
		if az, ok := a["availability_zone"].(string); ok && az != "" {
			a["metadata"].(map[string]any)["availability_zone"] = az
		}
		a["updated_at"] = time.Now().UTC().Format(timeFormat)
		return http.StatusOK, map[string]any{"aggregate": a}
	})
	route("POST "+p+"/os-aggregates/{id}/action", true, func(r *http.Request, body map[string]any) (int, any) {
		a, _ := aggregate(r)
		if a == nil {
			return notFound("aggregate")
		}
		if m, ok := body["set_metadata"].(map[string]any); ok {
			md := a["metadata"].(map[string]any)
			for k, v := range m["metadata"].(map[string]any) {
				if v == nil {
					delete(md, k)
				} else {
					md[k] = v
				}
			}
		}
		if m, ok := body["add_host"].(map[string]any); ok {
			a["hosts"] = append(a["hosts"].([]string), m["host"].(string))
		}
		if m, ok := body["remove_host"].(map[string]any); ok {
			a["hosts"] = slices.DeleteFunc(a["hosts"].([]string), func(h string) bool { return h == m["host"] })
		}
		return http.StatusOK, map[string]any{"aggregate": a}
	})
	route("DELETE "+p+"/os-aggregates/{id}", true, func(r *http.Request, _ map[string]any) (int, any) {
		a, id := aggregate(r)
		if a == nil {
			return notFound("aggregate")
		}
		delete(c.aggregates, id)
		delete(c.seen, "aggregate/"+strconv.Itoa(id))
		return http.StatusOK, nil
	})
	route("GET "+p+"/servers", false, func(_ *http.Request, _ map[string]any) (int, any) {
		return http.StatusOK, map[string]any{"servers": []any{}}
	})
	c.quotaRoutes(route, "compute", p+"/os-quota-sets/{project}", "quota_set",
		map[string]any{"cores": 20, "instances": 10, "ram": 51200, "key_pairs": 100, "metadata_items": 128, "server_groups": 10, "server_group_members": 10})
}

func (c *Cloud) blockStorageRoutes(route router) {
	const p = "/volume/v3"
	route("GET "+p+"/types", false, func(_ *http.Request, _ map[string]any) (int, any) {
		return http.StatusOK, map[string]any{"volume_types": byID(c.types)}
	})
	route("GET "+p+"/types/{id}", false, func(r *http.Request, _ map[string]any) (int, any) {
		t, ok := c.types[r.PathValue("id")]
		if !ok {
			return notFound("volume type")
		}
		c.saw("volume_type/" + r.PathValue("id"))
		return http.StatusOK, map[string]any{"volume_type": t}
	})
	route("POST "+p+"/types", true, func(_ *http.Request, body map[string]any) (int, any) {
		id := newID()
		t := map[string]any{"id": id, "description": "", "extra_specs": map[string]any{}, "is_public": true, "qos_specs_id": nil}
		merge(t, body["volume_type"])
		t["os-volume-type-access:is_public"] = t["os-volume-type-access:is_public"] != false && t["is_public"] != false
		t["is_public"] = t["os-volume-type-access:is_public"]
		c.types[id] = t
		c.access[id] = map[string]bool{}
		c.saw("volume_type/" + id)
		return http.StatusOK, map[string]any{"volume_type": t}
	})
	route("PUT "+p+"/types/{id}", true, func(r *http.Request, body map[string]any) (int, any) {
		t, ok := c.types[r.PathValue("id")]
		if !ok {
			return notFound("volume type")
		}
		merge(t, body["volume_type"])
		return http.StatusOK, map[string]any{"volume_type": t}
	})
	route("DELETE "+p+"/types/{id}", true, func(r *http.Request, _ map[string]any) (int, any) {
		if _, ok := c.types[r.PathValue("id")]; !ok {
			return notFound("volume type")
		}
		delete(c.types, r.PathValue("id"))
		delete(c.seen, "volume_type/"+r.PathValue("id"))
		return http.StatusAccepted, nil
	})
	route("POST "+p+"/types/{id}/extra_specs", true, func(r *http.Request, body map[string]any) (int, any) {
		t, ok := c.types[r.PathValue("id")]
		if !ok {
			return notFound("volume type")
		}
		specs, _ := body["extra_specs"].(map[string]any)
		maps.Copy(t["extra_specs"].(map[string]any), specs)
		return http.StatusOK, map[string]any{"extra_specs": specs}
	})
	route("DELETE "+p+"/types/{id}/extra_specs/{key}", true, func(r *http.Request, _ map[string]any) (int, any) {
		t, ok := c.types[r.PathValue("id")]
		if !ok {
			return notFound("volume type")
		}
		delete(t["extra_specs"].(map[string]any), r.PathValue("key"))
		return http.StatusAccepted, nil
	})
	route("GET "+p+"/types/{id}/os-volume-type-access", false, func(r *http.Request, _ map[string]any) (int, any) {
		out := []map[string]any{}
		for _, project := range slices.Sorted(maps.Keys(c.access[r.PathValue("id")])) {
			out = append(out, map[string]any{"project_id": project, "volume_type_id": r.PathValue("id")})
		}
		return http.StatusOK, map[string]any{"volume_type_access": out}
	})
	route("POST "+p+"/types/{id}/action", true, func(r *http.Request, body map[string]any) (int, any) {
		a, ok := c.access[r.PathValue("id")]
		if !ok {
			return notFound("volume type")
		}
		if m, ok := body["addProjectAccess"].(map[string]any); ok {
			a[m["project"].(string)] = true
		}
		if m, ok := body["removeProjectAccess"].(map[string]any); ok {
			delete(a, m["project"].(string))
		}
		return http.StatusAccepted, nil
	})
	route("GET "+p+"/os-services", false, func(_ *http.Request, _ map[string]any) (int, any) {
		// One cinder-volume per storage pool's backend, all up.
		out := []map[string]any{}
		for _, b := range Backends {
			out = append(out, map[string]any{"binary": "cinder-volume", "host": "cinder@" + b, "state": "up", "status": "enabled", "zone": "nova",
				"updated_at": time.Now().UTC().Format(timeFormat)})
		}
		return http.StatusOK, map[string]any{"services": out}
	})
	c.quotaRoutes(route, "volume", p+"/os-quota-sets/{project}", "quota_set",
		map[string]any{"volumes": 10, "gigabytes": 1000, "snapshots": 10, "backups": 10, "backup_gigabytes": 1000, "per_volume_gigabytes": -1, "groups": 10})
}

func (c *Cloud) networkRoutes(route router) {
	c.quotaRoutes(route, "network", "/network/v2.0/quotas/{project}", "quota",
		map[string]any{"network": 100, "subnet": 100, "port": 500, "router": 10, "floatingip": 50, "security_group": 10, "security_group_rule": 100, "rbac_policy": 10, "subnetpool": -1})
}

// quotaRoutes serves one service's quota sets: GET, PUT and DELETE (back
// to the defaults) of a project's.
func (c *Cloud) quotaRoutes(route router, service, path, key string, defaults map[string]any) {
	get := func(project string) map[string]any {
		q := maps.Clone(defaults)
		maps.Copy(q, c.quotas[service][project])
		q["id"] = project
		return q
	}
	route("GET "+path, false, func(r *http.Request, _ map[string]any) (int, any) {
		if c.projects[r.PathValue("project")] == nil {
			return notFound("project")
		}
		c.saw(service + "_quota/" + r.PathValue("project"))
		return http.StatusOK, map[string]any{key: get(r.PathValue("project"))}
	})
	route("PUT "+path, true, func(r *http.Request, body map[string]any) (int, any) {
		project := r.PathValue("project")
		if c.projects[project] == nil {
			return notFound("project")
		}
		if c.quotas[service][project] == nil {
			c.quotas[service][project] = map[string]any{}
		}
		in, _ := body[key].(map[string]any)
		for k, v := range in {
			if _, known := defaults[k]; known {
				c.quotas[service][project][k] = v
			}
		}
		c.saw(service + "_quota/" + project)
		return http.StatusOK, map[string]any{key: get(project)}
	})
	route("DELETE "+path, true, func(r *http.Request, _ map[string]any) (int, any) {
		delete(c.quotas[service], r.PathValue("project"))
		delete(c.seen, service+"_quota/"+r.PathValue("project"))
		return http.StatusAccepted, nil
	})
}

// byID lists objects sorted by their IDs, as the services list them.
func byID[K cmp.Ordered](objects map[K]map[string]any) []map[string]any {
	out := []map[string]any{}
	for _, id := range slices.Sorted(maps.Keys(objects)) {
		out = append(out, objects[id])
	}
	return out
}
