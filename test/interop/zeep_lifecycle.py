#!/usr/bin/python3
"""Agreement lifecycle against a running wsag-server, driven only by Python zeep and the WSDLs.

Usage: zeep_lifecycle.py BASE_URL        (e.g. http://127.0.0.1:8080)

Steps, each a zeep operation call built from the served WSDLs (no hand-written XML):
  1. AgreementFactory.GetResourceProperty(wsag:Template) over SOAP 1.1 and 1.2; pick deadline-job
     and read the values of its Terms from the objects zeep parsed (term_values).
  2. AgreementFactory.CreateAgreement with an AgreementOffer built, as a Grid client would, with
     zeep's public API only (build_offer): element and type factories for the declared content,
     xsd.AnyObject(element, value) for each foreign element in a wildcard slot, and the
     template's name, context and term values.
  3. Agreement.GetResourceProperty(wsag:Terms) and (wsag:AgreementId), addressed with the
     reference parameters of the returned EPR as SOAP headers (_soapheaders): the Terms come
     back as sent and carry the template's values.
  4. AgreementState.GetResourceProperty(wsag:AgreementState): Observed (SOAP 1.1 and 1.2).
  5. Agreement.Terminate (SOAP 1.2), then AgreementState again: Terminated (SOAP 1.1 and 1.2,
     the second time through GetResourcePropertyDocument).
  6. A typed fault: GetResourceProperty of a property the resource does not have answers a SOAP
     Fault whose detail is a bf:BaseFault (declared in the WSDL) with the protocol fault code.

zeep is used as shipped: no schema object is modified. Two zeep 4.2 limitations are worked around
on the side that needs it, each in one function: any_type_content (sending element content in an
xs:anyType element) and any_type_children / declared_child (reading).

Prints one JSON line; exit status 0 when every check held, 1 on a mismatch, 2 on an error.
"""

import datetime
import json
import sys
import traceback
import warnings

warnings.simplefilter("ignore", DeprecationWarning)  # zeep 4.2 imports the deprecated cgi module

from lxml import etree  # noqa: E402  (only to read elements zeep hands back, and to name a QName)
from zeep import Client, xsd  # noqa: E402
from zeep.exceptions import Fault  # noqa: E402
from zeep.plugins import HistoryPlugin  # noqa: E402

WSAG = "http://schemas.ggf.org/graap/2007/03/ws-agreement"
JSDL = "http://schemas.ggf.org/jsdl/2005/11/jsdl"
SLA = "http://schemas.wsag-server.org/2026/11/sla-terms"
WSA = "http://www.w3.org/2005/08/addressing"
BF = "http://docs.oasis-open.org/wsrf/bf-2"
SRV = "http://schemas.wsag-server.org/2026/11/server"
XS = "http://www.w3.org/2001/XMLSchema"


def any_type_content(*items):
    """The value of an xs:anyType element (wsag:CustomServiceLevel, wsag:ValueExpression) whose
    content is the given elements, each an xsd.AnyObject(element, value).

    zeep limitation (4.2): zeep serializes element content in an xs:anyType element only from an
    xsd.AnyObject whose type it can name in xsi:type (AnyType.render writes xsi:type from the
    type's QName; a list, or an AnyObject of an element, is written as its Python repr or fails).
    The schemas declare no named type for this content, so the type here is an ad-hoc
    xsd.ComplexType holding exactly anyType's content model (any elements) under the QName
    xs:anyType: the element then says xsi:type="xs:anyType", which is its declared type, and
    schema validation on the server reads the content exactly as without the attribute."""
    content = xsd.ComplexType(xsd.Sequence([xsd.Any(min_occurs=0, max_occurs="unbounded")]), qname=etree.QName(XS, "anyType"))
    return xsd.AnyObject(content, content(_value_1=list(items)))


def any_type_children(value, raw_terms, name):
    """The child elements of the xs:anyType element wsag:<name> (one in the Terms read here).

    zeep parses an xs:anyType element with element content into the list of its lxml child
    elements (as in the template). zeep limitation (4.2), read side: when the element carries
    xsi:type="xs:anyType" -- as zeep itself must send it, see any_type_content -- zeep keeps
    only its text and returns None. The children are then read from raw_terms, the wsag:Terms
    element of the received envelope (HistoryPlugin)."""
    if isinstance(value, list):
        return [v for v in value if isinstance(v, etree._Element)]
    raw = raw_terms.find(f".//{{{WSAG}}}{name}") if raw_terms is not None else None
    return list(raw) if raw is not None else []


def declared_child(value, name, namespace):
    """value.<name>, also when zeep put that element into a preceding wildcard.

    Read-side workaround: zeep ignores xs:any/@namespace (python-zeep#900): in
    wsag:AgreementStateType (a wildcard ##other minOccurs=0, then wsag:State) and
    bf:BaseFaultType (##other*, then bf:Timestamp, bf:ErrorCode, ...) the leading wildcard
    swallows the declared elements, which zeep then returns unparsed in value._value_1 while
    value.State / value.ErrorCode stay None."""
    direct = getattr(value, name, None)
    if direct is not None and direct != []:
        return direct
    swallowed = getattr(value, "_value_1", None)
    for element in swallowed if isinstance(swallowed, list) else [swallowed]:
        if isinstance(element, etree._Element) and element.tag == f"{{{namespace}}}{name}":
            return element.text.strip() if element.text else ""
    return None


def term_values(client, terms, raw_terms=None):
    """The values of a deadline-job wsag:Terms as zeep parsed it (a TermTreeType object).

    zeep parses foreign elements in lax wildcards it has declarations for into their values: the
    jsdl:JobDefinition of the service description term is a JobDefinition_Type object, the
    sla:ServiceLevel in jsdl:JobDescription's extension point a ServiceLevelType object, and
    sla:Interconnect in jsdl:Resources' extension point a bare string (zeep keeps no element
    name there; it is the only element of that extension point in the template). The content of
    the xs:anyType elements is parsed with zeep element by element (see any_type_children)."""
    compositor = terms.All._value_1
    service_term = next(c["ServiceDescriptionTerm"] for c in compositor if c.get("ServiceDescriptionTerm"))
    guarantee = next(c["GuaranteeTerm"] for c in compositor if c.get("GuaranteeTerm"))
    job = service_term._value_1.JobDescription
    resources = job.Resources
    (interconnect,) = [v for v in resources._value_1 or [] if isinstance(v, str)]
    (level,) = [v for v in job._value_1 or [] if hasattr(v, "GuaranteeLevel")]
    kpi = guarantee.ServiceLevelObjective.KPITarget
    (penalty,) = guarantee.BusinessValueList.Penalty

    def parsed(children):
        return {etree.QName(e).text: client.get_element(e.tag).parse(e, client.wsdl.types) for e in children}

    def exact(range_value):
        (value,) = range_value.Exact
        return value._value_1

    return {
        "serviceTerm": service_term.Name,
        "serviceName": service_term.ServiceName,
        "jobName": job.JobIdentification.JobName,
        "operatingSystem": resources.OperatingSystem.OperatingSystemType.OperatingSystemName,
        "cpuArchitecture": resources.CPUArchitecture.CPUArchitectureName,
        "cpusPerNode": exact(resources.IndividualCPUCount),
        "memoryPerNode": exact(resources.IndividualPhysicalMemory),
        "nodeCount": exact(resources.TotalResourceCount),
        "interconnect": interconnect,
        "runtimeEstimate": level.RuntimeEstimate,
        "deadline": level.Deadline,
        "requestKind": level.RequestKind,
        "guaranteeLevel": level.GuaranteeLevel,
        "maxCoveredOutages": level.MaxCoveredOutages,
        "migrationScope": level.MigrationPolicy.Scope,
        "guaranteeTerm": guarantee.Name,
        "obligated": guarantee.Obligated,
        "serviceScope": [s.ServiceName for s in guarantee.ServiceScope],
        "kpiName": kpi.KPIName,
        "kpiTarget": parsed(any_type_children(kpi.CustomServiceLevel, raw_terms, "CustomServiceLevel")),
        "importance": guarantee.BusinessValueList.Importance,
        "assessmentInterval": penalty.AssessmentInterval.TimeInterval,
        "valueUnit": penalty.ValueUnit,
        "penalty": parsed(any_type_children(penalty.ValueExpression, raw_terms, "ValueExpression")),
    }


def build_offer(client, template, values):
    """A wsag:AgreementOffer for the template, built from zeep's element and type factories.

    Declared content is made with the type factories of its namespace; each foreign element in
    a wildcard slot (jsdl:JobDefinition in the service description term, sla:Interconnect and
    sla:ServiceLevel in JSDL's extension points) is an xsd.AnyObject(element, value), and the
    xs:anyType elements get any_type_content. Structure as in the template; the template has no
    wsag:QualifyingCondition, so the offer has none either."""
    wsag, jsdl, sla = client.type_factory(WSAG), client.type_factory(JSDL), client.type_factory(SLA)

    def exact(value):
        return jsdl.RangeValue_Type(Exact=[jsdl.Exact_Type(value)])

    def foreign(content):
        return [xsd.AnyObject(client.get_element(name), value) for name, value in content.items()]

    JobDefinition = client.get_element("jsdl:JobDefinition")
    job = JobDefinition(JobDescription=jsdl.JobDescription_Type(
        JobIdentification=jsdl.JobIdentification_Type(JobName=values["jobName"]),
        Resources=jsdl.Resources_Type(
            OperatingSystem=jsdl.OperatingSystem_Type(
                OperatingSystemType=jsdl.OperatingSystemType_Type(OperatingSystemName=values["operatingSystem"])),
            CPUArchitecture=jsdl.CPUArchitecture_Type(CPUArchitectureName=values["cpuArchitecture"]),
            IndividualCPUCount=exact(values["cpusPerNode"]),
            IndividualPhysicalMemory=exact(values["memoryPerNode"]),
            TotalResourceCount=exact(values["nodeCount"]),
            _value_1=[xsd.AnyObject(client.get_element("sla:Interconnect"), values["interconnect"])],
        ),
        _value_1=[xsd.AnyObject(client.get_element("sla:ServiceLevel"), sla.ServiceLevelType(
            RuntimeEstimate=values["runtimeEstimate"],
            Deadline=values["deadline"],
            RequestKind=values["requestKind"],
            GuaranteeLevel=values["guaranteeLevel"],
            MaxCoveredOutages=values["maxCoveredOutages"],
            MigrationPolicy=sla.MigrationPolicyType(Scope=values["migrationScope"]),
        ))],
    ))
    service_term = wsag.ServiceDescriptionTermType(
        Name=values["serviceTerm"], ServiceName=values["serviceName"], _value_1=xsd.AnyObject(JobDefinition, job))
    guarantee_term = wsag.GuaranteeTermType(
        Name=values["guaranteeTerm"],
        Obligated=values["obligated"],
        ServiceScope=[wsag.ServiceSelectorType(ServiceName=name) for name in values["serviceScope"]],
        ServiceLevelObjective=wsag.ServiceLevelObjectiveType(KPITarget=wsag.KPITargetType(
            KPIName=values["kpiName"], CustomServiceLevel=any_type_content(*foreign(values["kpiTarget"])))),
        BusinessValueList=wsag.BusinessValueListType(
            Importance=values["importance"],
            Penalty=[wsag.CompensationType(
                AssessmentInterval={"TimeInterval": values["assessmentInterval"]},
                ValueUnit=values["valueUnit"],
                ValueExpression=any_type_content(*foreign(values["penalty"])),
            )],
        ),
    )
    context = template.Context
    return client.get_element("wsag:AgreementOffer")(
        Name=template.Name,
        Context=wsag.AgreementContextType(
            ServiceProvider=context.ServiceProvider, TemplateId=context.TemplateId, TemplateName=context.TemplateName),
        Terms=wsag.TermTreeType(All=wsag.TermCompositorType(_value_1=[
            {"ServiceDescriptionTerm": service_term},
            {"GuaranteeTerm": guarantee_term},
        ])),
    )


def terms_element(envelope):
    """The (first) wsag:Terms element of an envelope zeep sent or received."""
    return envelope.find(f".//{{{WSAG}}}Terms")


def canonical(element):
    """Exclusive C14N of an element, or None."""
    return etree.tostring(element, method="c14n", exclusive=True) if element is not None else None


def json_value(value):
    """JSON for the values zeep parsed: dates as ISO 8601, durations and decimals as text."""
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return xsd.Duration().xmlvalue(value)
    return str(value)


def main(base, result):
    checks = []

    def check(name, actual, expected):
        checks.append({"check": name, "ok": actual == expected, "actual": actual, "expected": expected})
        return actual

    # --- 1. templates ---------------------------------------------------------------------
    factory_history = HistoryPlugin()
    factory = Client(f"{base}/wsag/AgreementFactory?wsdl", plugins=[factory_history])
    # xs:QName values are sent as text; the prefix must be declared on the envelope, which zeep
    # does for prefixes registered here. jsdl: and sla: name the term elements below.
    factory.set_ns_prefix("wsag", WSAG)
    factory.set_ns_prefix("jsdl", JSDL)
    factory.set_ns_prefix("sla", SLA)
    factory11 = factory.bind("AgreementFactoryService", "AgreementFactorySoap11Port")
    factory12 = factory.bind("AgreementFactoryService", "AgreementFactorySoap12Port")

    templates = factory11.GetResourceProperty("wsag:Template")
    result["templates"] = sorted(t.Name for t in templates)
    templates12 = factory12.GetResourceProperty("wsag:Template")
    check("templates over SOAP 1.2", sorted(t.Name for t in templates12), result["templates"])
    template = next((t for t in templates if t.Name == "deadline-job"), None)
    if template is None:
        raise RuntimeError(f"no template named deadline-job among {result['templates']}")
    result["templateId"] = template.TemplateId
    values = term_values(factory, template.Terms)
    result["offered"] = json.loads(json.dumps(values, default=json_value))

    # --- 2. CreateAgreement with an offer built from the template's values -------------------
    created = factory11.CreateAgreement(AgreementOffer=build_offer(factory, template, values))
    offer_terms = terms_element(factory_history.last_sent["envelope"])
    epr = created.CreatedAgreementEPR
    result["eprAddress"] = epr.Address._value_1 if hasattr(epr.Address, "_value_1") else epr.Address
    check("EPR address", result["eprAddress"], f"{base}/wsag/Agreement")
    # The WSDL declares srv:AgreementId (its own type) as the input header of the Agreement
    # ports: zeep reads it from the EPR as a typed value and sends it back as a typed header,
    # marked wsa:IsReferenceParameter="true" (WS-Addressing SOAP binding, section 2.3).
    ids = [p._value_1 for p in (epr.ReferenceParameters._value_1 or []) if type(p).__name__ == "AgreementIdType"]
    if len(ids) != 1:
        raise RuntimeError(f"the EPR's ReferenceParameters hold no srv:AgreementId: {epr.ReferenceParameters}")
    agreement_id = result["agreementId"] = ids[0]
    soap_headers = {"AgreementId": {"_value_1": agreement_id, "_attr_1": {f"{{{WSA}}}IsReferenceParameter": "true"}}}

    # --- 3. Agreement port: Terms, AgreementId --------------------------------------------
    history = HistoryPlugin()
    agreement = Client(f"{base}/wsag/Agreement?wsdl", plugins=[history])
    agreement.set_ns_prefix("wsag", WSAG)
    agreement11 = agreement.bind("AgreementService", "AgreementSoap11Port")
    agreement12 = agreement.bind("AgreementService", "AgreementSoap12Port")

    terms = agreement11.GetResourceProperty("wsag:Terms", _soapheaders=soap_headers)
    check("one wsag:Terms value", len(terms), 1)
    received_terms = terms_element(history.last_received["envelope"])
    # The agreement's Terms are the offer's as zeep sent them (compared canonically; exclusive
    # C14N omits the xs: declaration that only xsi:type="xs:anyType" uses, but zeep's typed
    # parsing of the Terms resolves that QName and fails if the server lost it) ...
    check("agreement Terms = offer Terms", canonical(received_terms) == canonical(offer_terms) and offer_terms is not None, True)
    # ... and, parsed by zeep again, carry the values read from the template.
    agreed = json.loads(json.dumps(term_values(agreement, terms[0], received_terms), default=json_value))
    check("agreement term values = template term values", agreed, result["offered"])
    compositor = terms[0].All._value_1
    result["serviceTerms"] = [c["ServiceDescriptionTerm"].Name for c in compositor if c.get("ServiceDescriptionTerm")]
    result["guaranteeTerms"] = [c["GuaranteeTerm"].Name for c in compositor if c.get("GuaranteeTerm")]
    check("service terms", result["serviceTerms"], ["Job"])
    check("guarantee terms", result["guaranteeTerms"], ["CompletionByDeadline"])
    # zeep's typed parsing: the jsdl term is a typed object here.
    job = compositor[0]["ServiceDescriptionTerm"]._value_1
    result["nodeCount"] = int(job.JobDescription.Resources.TotalResourceCount.Exact[0]._value_1)
    check("jsdl:TotalResourceCount/Exact", result["nodeCount"], 4)
    # zeep adds WS-Addressing headers by itself when the WSDL names a wsam:Action: it sends that
    # Action and a MessageID, and the server answers with the response Action and RelatesTo.
    sent, received = history.last_sent["envelope"], history.last_received["envelope"]
    check("wsa:Action sent", sent.findtext(f".//{{{WSA}}}Action"), "http://docs.oasis-open.org/wsrf/rpw-2/GetResourceProperty/GetResourcePropertyRequest")
    check("wsa:RelatesTo = wsa:MessageID", received.findtext(f".//{{{WSA}}}RelatesTo"), sent.findtext(f".//{{{WSA}}}MessageID"))

    ids_read = agreement12.GetResourceProperty("wsag:AgreementId", _soapheaders=soap_headers)
    check("wsag:AgreementId over SOAP 1.2", list(ids_read), [agreement_id])
    content_type = history.last_sent["http_headers"].get("Content-Type", "")
    check("SOAP 1.2 content type", content_type.split(";")[0], "application/soap+xml")
    check("SOAP 1.2 envelope", etree.QName(history.last_sent["envelope"]).namespace, "http://www.w3.org/2003/05/soap-envelope")

    # --- 4. AgreementState: Observed --------------------------------------------------------
    state = Client(f"{base}/wsag/AgreementState?wsdl")
    state.set_ns_prefix("wsag", WSAG)
    state11 = state.bind("AgreementStateService", "AgreementStateSoap11Port")
    state12 = state.bind("AgreementStateService", "AgreementStateSoap12Port")

    def agreement_state(service):
        values = service.GetResourceProperty("wsag:AgreementState", _soapheaders=soap_headers)
        return declared_child(values[0], "State", WSAG) if len(values) == 1 else f"{len(values)} values"

    result["stateBefore"] = {"soap11": agreement_state(state11), "soap12": agreement_state(state12)}
    check("state before Terminate", result["stateBefore"], {"soap11": "Observed", "soap12": "Observed"})

    # --- 5. Terminate, then Terminated ------------------------------------------------------
    # TerminateInput holds exactly one element of any namespace: the reason, as srv:Reason.
    reason = xsd.AnyObject(xsd.Element(f"{{{SRV}}}Reason", xsd.String()), "terminated by the zeep interop test")
    agreement12.Terminate(_value_1=reason, _soapheaders=soap_headers)

    document = state12.GetResourcePropertyDocument(_soapheaders=soap_headers)
    result["stateAfter"] = {"soap11": agreement_state(state11), "soap12": declared_child(document.AgreementState, "State", WSAG)}
    check("state after Terminate", result["stateAfter"], {"soap11": "Terminated", "soap12": "Terminated"})
    check("document's agreement id", document.AgreementId, agreement_id)

    # --- 6. a typed fault ---------------------------------------------------------------------
    BaseFault = state.get_element(f"{{{BF}}}BaseFault")

    def fault_code(service):
        try:
            service.GetResourceProperty("wsag:NoSuchProperty", _soapheaders=soap_headers)
            return "no fault"
        except Fault as fault:
            detail = fault.detail.find(f".//{{{BF}}}BaseFault") if fault.detail is not None else None
            if detail is None:
                return f"no bf:BaseFault in the detail of: {fault.message}"
            base_fault = BaseFault.parse(detail, state.wsdl.types)
            return declared_child(base_fault, "ErrorCode", BF)

    result["faultCode"] = {"soap11": fault_code(state11), "soap12": fault_code(state12)}
    check("bf:BaseFault ErrorCode", result["faultCode"], {"soap11": "InvalidResourcePropertyQName", "soap12": "InvalidResourcePropertyQName"})

    result["ok"] = all(c["ok"] for c in checks)
    result["mismatches"] = [c for c in checks if not c["ok"]]
    result["checks"] = len(checks)
    print(json.dumps(result, default=str))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: zeep_lifecycle.py BASE_URL", file=sys.stderr)
        sys.exit(2)
    partial = {}
    try:
        sys.exit(main(sys.argv[1].rstrip("/"), partial))
    except Exception as error:  # one JSON line either way, for the test to show
        traceback.print_exc()
        print(json.dumps({**partial, "ok": False, "error": f"{type(error).__name__}: {error}"}, default=str))
        sys.exit(2)
